package convert

// expandExtra expands more function operators below their introduction.
// It reports whether it handled sc.n's op type.
func expandExtra(sc *stepCtx, to int) (bool, error) {
	return false, nil
}
