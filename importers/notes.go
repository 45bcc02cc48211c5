package importers

import "github.com/onnxconv/onnxconv/canonical"

// NoteKey is the model metadata key under which an importer leaves a note
// for the conversion's summary: a choice the user should see (which
// tensors of a training graph it took as inputs and outputs, and why),
// not a warning. The metadata crosses the plugin protocol with the model;
// TakeNotes removes it before the model is written.
const NoteKey = "onnxconv.import_note"

// AddNote records note on m under NoteKey.
func AddNote(m *canonical.Model, note string) {
	m.MetadataProps = append(m.MetadataProps, canonical.StringPair{Key: NoteKey, Value: note})
}

// TakeNotes returns the notes recorded on m and removes them from it.
func TakeNotes(m *canonical.Model) []string {
	var notes []string
	kept := m.MetadataProps[:0]
	for _, p := range m.MetadataProps {
		if p.Key == NoteKey {
			notes = append(notes, p.Value)
			continue
		}
		kept = append(kept, p)
	}
	m.MetadataProps = kept
	return notes
}
