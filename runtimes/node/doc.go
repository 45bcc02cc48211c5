// Package node is what the Node-based reference runtimes of onnxconv
// (runtimes/tflite, runtimes/tfjs, runtimes/ortnode) share: finding the node executable and
// the node_modules folder that holds their npm packages (Find, in the
// documented search order), the typed *MissingError whose message is the
// runtime's one install command, starting node on an embedded script
// (Exec), and the framed stdin/stdout protocol (Frame, Unframe, and
// FrameJS, its JavaScript side: a 4-byte little-endian length, a JSON
// header of that length, then raw bytes in header order).
//
// Each runtime keeps its own exported API (Find, FindOptions, Env,
// MissingError, ...) as thin wrappers and aliases over this package.
package node
