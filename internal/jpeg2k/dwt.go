package jpeg2k

// Inverse discrete wavelet transforms (T.800 Annex F), resolution by
// resolution, rows then columns, as OpenJPEG orders them.

// 9/7 lifting constants as OpenJPEG has them (float32), the high-pass
// scaled by 2/K (its subband step sizes leave out the subband gain).
const (
	alpha97 float32 = -1.586134342
	beta97  float32 = -0.052980118
	gamma97 float32 = 0.882911075
	delta97 float32 = 0.443506852
	k97     float32 = 1.230174105
	twoInvK float32 = 1.625732422
)

func (tc *tileComp) inverseDWT() {
	stride := tc.x1 - tc.x0
	var ibuf []int32
	var fbuf []float32
	for r := 1; r < len(tc.res); r++ {
		res, prev := tc.res[r], tc.res[r-1]
		rw, rh := res.x1-res.x0, res.y1-res.y0
		if rw == 0 || rh == 0 {
			continue
		}
		n := max(rw, rh)
		if tc.ints != nil {
			if cap(ibuf) < n {
				ibuf = make([]int32, n)
			}
			inverse2D(tc.ints, stride, res, prev, ibuf, lift53)
		} else {
			if cap(fbuf) < n {
				fbuf = make([]float32, n)
			}
			inverse2D(tc.floats, stride, res, prev, fbuf, lift97)
		}
	}
}

// inverse2D runs lift over the rows, then the columns, of resolution res
// (prev is the resolution below it, whose size is the low-pass count).
func inverse2D[T int32 | float32](a []T, stride int, res, prev resolution, buf []T, lift func(a []T, step, n, sn, cas int, buf []T)) {
	rw, rh := res.x1-res.x0, res.y1-res.y0
	for y := 0; y < rh; y++ {
		lift(a[y*stride:], 1, rw, prev.x1-prev.x0, res.x0&1, buf)
	}
	for x := 0; x < rw; x++ {
		lift(a[x:], stride, rh, prev.y1-prev.y0, res.y0&1, buf)
	}
}

// interleave copies n samples of a (step apart; sn low-pass then the
// high-pass) into buf with low-pass samples at positions of parity cas.
func interleave[T int32 | float32](a []T, step, n, sn, cas int, buf []T) []T {
	buf = buf[:n]
	for i := 0; i < n; i++ {
		src := i / 2
		if (cas+i)&1 != 0 {
			src += sn
		}
		buf[i] = a[src*step]
	}
	return buf
}

func scatter[T int32 | float32](a []T, step int, buf []T) {
	for i, v := range buf {
		a[i*step] = v
	}
}

// mirror is the whole-sample symmetric extension of index i into [0,n).
func mirror(i, n int) int {
	if i < 0 {
		return -i
	}
	if i >= n {
		return 2*(n-1) - i
	}
	return i
}

func lift53(a []int32, step, n, sn, cas int, buf []int32) {
	x := interleave(a, step, n, sn, cas, buf)
	if n == 1 {
		if cas == 1 {
			x[0] /= 2
		}
		scatter(a, step, x)
		return
	}
	for i := cas; i < n; i += 2 {
		x[i] -= (x[mirror(i-1, n)] + x[mirror(i+1, n)] + 2) >> 2
	}
	for i := 1 - cas; i < n; i += 2 {
		x[i] += (x[mirror(i-1, n)] + x[mirror(i+1, n)]) >> 1
	}
	scatter(a, step, x)
}

func lift97(a []float32, step, n, sn, cas int, buf []float32) {
	if n == 1 {
		return
	}
	x := interleave(a, step, n, sn, cas, buf)
	for i := cas; i < n; i += 2 {
		x[i] = float32(x[i] * k97)
	}
	for i := 1 - cas; i < n; i += 2 {
		x[i] = float32(x[i] * twoInvK)
	}
	for _, s := range []struct {
		first int
		c     float32
	}{{cas, -delta97}, {1 - cas, -gamma97}, {cas, -beta97}, {1 - cas, -alpha97}} {
		for i := s.first; i < n; i += 2 {
			x[i] += float32((x[mirror(i-1, n)] + x[mirror(i+1, n)]) * s.c)
		}
	}
	scatter(a, step, x)
}
