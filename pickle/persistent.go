package pickle

// persistentID replaces the persistent id on top of the stack (BINPERSID)
// with what Options.Persistent makes of it: the caller's own inert value,
// such as a reference to a storage record of an archive. Nothing is
// called that the pickle names.
func (d *Decoder) persistentID(at int) error {
	pid, err := d.pop()
	if err != nil {
		return err
	}
	v, err := d.opts.Persistent(pid)
	if err != nil {
		return &RefusedError{Name: "persistent id " + Describe(pid), Offset: at, Err: err}
	}
	return d.push(v)
}
