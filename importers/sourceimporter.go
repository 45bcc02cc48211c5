package importers

import "context"

// SourceImporter is implemented by predictors that can import a file and
// open its source in one go, so that one reader serves both: a plugin
// importer parses the file in one plugin process, which imports it and
// then computes every sample of its source. Verification uses it when it
// knows at import time that it will compute the source.
type SourceImporter interface {
	Predictor
	// ImportSource is Import, then Source of the same file with the same
	// options. err is Import's failure. When only the source cannot be
	// opened, src is nil: Source, called then, opens it anew or says why
	// it cannot.
	ImportSource(ctx context.Context, path string, opts Options) (res *Result, src Source, err error)
}
