package plugins

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/hashicorp/go-plugin"

	"github.com/onnxconv/onnxconv/formats/formatinfo"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// maxMagicEnd bounds how far into a file magic patterns may reach.
const maxMagicEnd = 1 << 20

// Detect finds the importer for the file at path: by magic bytes first,
// then by file extension (the longest matching one). When several importers
// match at the same stage, each is asked (its Detect call) and the most
// confident wins. It returns the plugin name and the format name.
func (h *Host) Detect(ctx context.Context, path string) (name, format string, err error) {
	need := protocol.HeadSize
	for _, p := range h.plugins {
		if p.Err != nil || p.Importer == nil {
			continue
		}
		for _, m := range p.Importer.Magic {
			if end := m.Offset + int64(len(m.Bytes)); end > int64(need) && end <= maxMagicEnd {
				need = int(end)
			}
		}
	}
	head, err := readHead(path, need)
	if err != nil {
		return "", "", fmt.Errorf("detecting the format of %s: %w", path, err)
	}
	var byMagic, byExt []*PluginInfo
	bestExt := 0
	for i := range h.plugins {
		p := &h.plugins[i]
		if p.Err != nil || p.Importer == nil {
			continue
		}
		if formatinfo.MatchMagic(head, p.Importer.Magic) {
			byMagic = append(byMagic, p)
			continue
		}
		if n := formatinfo.ExtensionLength(path, p.Importer.Extensions); n > 0 {
			if n > bestExt {
				bestExt, byExt = n, byExt[:0]
			}
			if n == bestExt {
				byExt = append(byExt, p)
			}
		}
	}
	cands := byMagic
	if len(cands) == 0 {
		cands = byExt
	}
	switch len(cands) {
	case 0:
		return "", "", fmt.Errorf("%s (extension %q, first bytes %q): %w; name the format explicitly (--from)",
			path, filepath.Ext(path), head[:min(len(head), 8)], ErrNoMatch)
	case 1:
		return cands[0].Name, cands[0].Importer.Format, nil
	}
	// Several candidates: ask them.
	small := head[:min(len(head), protocol.HeadSize)]
	best, bestConf := cands[0], float32(-1)
	var lastErr error
	for _, p := range cands {
		var ok bool
		var conf float32
		_, err := call(ctx, h.opts, p, "detect", path, h.opts.DescribeTimeout, func(ctx context.Context, cp plugin.ClientProtocol) error {
			imp, _, err := dispense(cp)
			if err != nil {
				return err
			}
			ok, conf, err = imp.Detect(ctx, path, small)
			return err
		})
		if err != nil {
			lastErr = err
			continue
		}
		if ok && conf > bestConf {
			best, bestConf = p, conf
		}
	}
	if bestConf < 0 && lastErr != nil {
		return "", "", fmt.Errorf("detecting the format of %s: %w", path, lastErr)
	}
	return best.Name, best.Importer.Format, nil
}
