package onnxspec

// IRVersion returns the IR version of the first ONNX release that shipped
// opset version of domain (docs/Versioning.md, "Released Versions"): the
// lowest IR version a model importing that opset may declare. Unknown
// domains give 3.
func IRVersion(domain string, version int) int64 {
	switch NormalizeDomain(domain) {
	case DomainML:
		switch {
		case version <= 1:
			return 3
		case version == 2:
			return 6
		case version == 3:
			return 8
		case version == 4:
			return 9
		default:
			return 10
		}
	case DomainONNX:
		switch {
		case version <= 8:
			return 3
		case version == 9:
			return 4
		case version == 10:
			return 5
		case version == 11:
			return 6
		case version <= 14:
			return 7
		case version <= 18:
			return 8
		case version <= 20:
			return 9
		case version <= 22:
			return 10
		case version == 23:
			return 11
		case version == 24:
			return 12
		default:
			return 13
		}
	}
	return 3
}
