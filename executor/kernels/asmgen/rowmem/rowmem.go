// Package rowmem holds the addressing the generated kernels share: row i
// of a strided block from a base register, without a register per row.
package rowmem

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// At is the memory operand of row i mod 4 of the four rows from base, ld
// bytes apart (ld3 holding 3·ld): base, base+ld, base+2·ld, base+ld3 —
// x86's scaled index reaches 1, 2, 4 and 8 times a register, so a kernel
// reading more rows keeps one base per four (base + 4·ld, …).
func At(base, ld, ld3 reg.Register, i int) operand.Mem {
	m := operand.Mem{Base: base}
	switch i % 4 {
	case 1:
		m.Index, m.Scale = ld, 1
	case 2:
		m.Index, m.Scale = ld, 2
	case 3:
		m.Index, m.Scale = ld3, 1
	}
	return m
}
