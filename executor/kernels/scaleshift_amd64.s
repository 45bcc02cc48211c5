// Hand-written (not generated): y = float32(x·sc) + sh, 8 lanes at a time.

#include "textflag.h"

// func scaleShiftAVX2(n int, sc float32, sh float32, x *float32, y *float32)
// n is a multiple of 8; y may be x.
TEXT ·scaleShiftAVX2(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	VBROADCASTSS sc+8(FP), Y1
	VBROADCASTSS sh+12(FP), Y2
	MOVQ         x+16(FP), SI
	MOVQ         y+24(FP), DI

loop32:
	CMPQ    CX, $32
	JL      loop8
	VMULPS  (SI), Y1, Y3
	VMULPS  32(SI), Y1, Y4
	VMULPS  64(SI), Y1, Y5
	VMULPS  96(SI), Y1, Y6
	VADDPS  Y2, Y3, Y3
	VADDPS  Y2, Y4, Y4
	VADDPS  Y2, Y5, Y5
	VADDPS  Y2, Y6, Y6
	VMOVUPS Y3, (DI)
	VMOVUPS Y4, 32(DI)
	VMOVUPS Y5, 64(DI)
	VMOVUPS Y6, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     loop32

loop8:
	TESTQ   CX, CX
	JZ      done
	VMULPS  (SI), Y1, Y3
	VADDPS  Y2, Y3, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     loop8

done:
	VZEROUPPER
	RET
