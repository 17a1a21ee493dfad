#include "textflag.h"

// func Line(addr uintptr)
TEXT ·Line(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ	addr+0(FP), AX
	PREFETCHT0	(AX)
	RET

// func Range(addr, n uintptr)
TEXT ·Range(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ	addr+0(FP), AX
	MOVQ	n+8(FP), CX
	LEAQ	-1(AX)(CX*1), CX
	ANDQ	$~63, AX
loop:
	PREFETCHT0	(AX)
	ADDQ	$64, AX
	CMPQ	AX, CX
	JLS	loop
	RET
