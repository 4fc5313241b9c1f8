// Package lines reads input that may be damaged or hostile in bounded
// pieces: a line longer than the limit is skipped whole and counted, so one
// bad line never hides the rest and never costs more than the limit; Cap
// bounds a whole stream (a decompression bomb stops at the cap).
package lines

import (
	"bufio"
	"errors"
	"io"
)

// Reader returns the lines of r one at a time.
type Reader struct {
	br  *bufio.Reader
	max int
	buf []byte
	// Line is the number of the line last returned or skipped (1-based).
	Line int
	// Long counts the lines skipped for being longer than the limit;
	// FirstLong is the number of the first one.
	Long, FirstLong int
	// Partial is true when the last line returned had no newline: the
	// input ended (or was cut) in the middle of it.
	Partial bool
}

// NewReader reads lines of at most max bytes (the newline excluded).
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, min(max+1, 64<<10)), max: max}
}

// Next returns the next line without its "\n" (a "\r" before it is kept).
// The slice is valid until the next call. At the end it returns io.EOF; a
// read error (a truncated gzip stream, say) is returned as is, and the
// unfinished line before it is dropped, never returned as if complete.
func (r *Reader) Next() ([]byte, error) {
	for {
		r.buf = r.buf[:0]
		long := false
		for {
			chunk, err := r.br.ReadSlice('\n')
			n := len(chunk)
			if n > 0 && chunk[n-1] == '\n' {
				n--
			}
			if !long && len(r.buf)+n > r.max {
				long, r.buf = true, r.buf[:0]
			}
			if !long {
				r.buf = append(r.buf, chunk...)
			}
			switch {
			case errors.Is(err, bufio.ErrBufferFull):
				continue
			case err == nil:
			case err == io.EOF && (long || len(r.buf) > 0):
				r.Line++
				if long {
					r.skip()
					return nil, io.EOF
				}
				r.Partial = true
				return r.buf, nil
			default:
				return nil, err
			}
			break
		}
		r.Line++
		if long {
			r.skip()
			continue
		}
		r.Partial = false
		return r.buf[:len(r.buf)-1], nil
	}
}

func (r *Reader) skip() {
	if r.Long == 0 {
		r.FirstLong = r.Line
	}
	r.Long++
}

// Capped reads at most a given number of bytes; Hit tells whether the
// input held more (then the reader stopped at the cap as if at the end).
type Capped struct {
	r   io.Reader
	n   int64
	Hit bool
}

// Cap reads at most n bytes of r.
func Cap(r io.Reader, n int64) *Capped { return &Capped{r: r, n: n} }

func (c *Capped) Read(p []byte) (int, error) {
	if c.n <= 0 {
		var one [1]byte
		if k, _ := c.r.Read(one[:]); k > 0 {
			c.Hit = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	k, err := c.r.Read(p)
	c.n -= int64(k)
	return k, err
}
