package importers

// OptionInputs is the import option by which an importer that needs its
// inputs' shapes reads them from a folder of input samples: when a
// conversion is verified with --inputs DIR and the importer has this
// option, the pipeline sets it to DIR. It is not "inputs", which the
// TensorFlow importer takes for the names of the graph's input nodes.
const OptionInputs = "inputs_dir"
