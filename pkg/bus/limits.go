package bus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Value size limits. A reader decodes a value only while it stays within
// its limit: a compressed value is decompressed through a bounded reader,
// so a value that would expand past the limit (a decompression bomb) costs
// at most the limit and zstd's window, never what it claims to expand to.
const (
	// DefaultMaxValueBytes is the default limit of a decoded value: four
	// times the largest value a writer writes ([Bus.MaxWriteBytes]), so a
	// reader always reads what an honest writer wrote.
	DefaultMaxValueBytes = 64 << 20
	// MaxValueBytesCap is the hard cap of [WithMaxValueBytes].
	MaxValueBytesCap = 256 << 20
	// MinValueBytes is the least [WithMaxValueBytes] accepts.
	MinValueBytes = 1 << 20
	// writeShare: writers refuse values larger than a quarter of the
	// readers' limit.
	writeShare = 4
	// maxWindow bounds the window a compressed value may ask for; the
	// bus's encoder uses 1 MiB, zstd's command line at most 8 MiB below
	// its --ultra levels.
	maxWindow = 8 << 20
)

// ErrTooLarge: a value is larger than the limit of this process, as
// written (a write refused) or once decompressed (a read refused).
var ErrTooLarge = errors.New("bus: value too large")

// ErrBadValue marks an entry whose value does not decode; see [Entry.Err].
var ErrBadValue = errors.New("bus: value does not decode")

// WithMaxValueBytes sets the largest decoded value a reader accepts
// (default [DefaultMaxValueBytes], at most [MaxValueBytesCap]); writers
// refuse values larger than a quarter of it with [ErrTooLarge].
func WithMaxValueBytes(n int64) Option {
	return func(o *options) error {
		if n < MinValueBytes || n > MaxValueBytesCap {
			return fmt.Errorf("bus: max value bytes %d: want %d to %d", n, MinValueBytes, MaxValueBytesCap)
		}
		o.maxValue = n
		return nil
	}
}

// MaxValueBytes is the largest decoded value this bus reads.
func (b *Bus) MaxValueBytes() int64 { return b.o.maxValue }

// MaxWriteBytes is the largest value this bus writes, encoded and before
// compression.
func (b *Bus) MaxWriteBytes() int64 { return b.o.maxValue / writeShare }

// decoders are streaming zstd decoders, one per concurrent decode; each
// keeps a window of at most maxWindow.
var decoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(maxWindow))
	if err != nil {
		panic(err) // the options are constant
	}
	return d
}}

// decompress expands data, failing with ErrTooLarge as soon as the output
// passes limit. The output buffer starts at the frame's declared size only
// when that is within the limit, so neither a lying header nor a bomb
// allocates past it.
func decompress(data []byte, limit int64) ([]byte, error) {
	var hdr zstd.Header
	if err := hdr.Decode(data); err != nil {
		return nil, err
	}
	if hdr.HasFCS && hdr.FrameContentSize > uint64(limit) {
		return nil, fmt.Errorf("%w: declares %d bytes decompressed, the limit is %d", ErrTooLarge, hdr.FrameContentSize, limit)
	}
	d := decoders.Get().(*zstd.Decoder)
	defer decoders.Put(d)
	if err := d.Reset(bytes.NewReader(data)); err != nil {
		return nil, err
	}
	defer func() { _ = d.Reset(nil) }()
	size := min(int64(hdr.FrameContentSize), limit) + 1
	if !hdr.HasFCS {
		size = min(int64(4*len(data)), limit) + 1
	}
	out := bytes.NewBuffer(make([]byte, 0, size))
	n, err := out.ReadFrom(io.LimitReader(d, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%w: more than %d bytes decompressed", ErrTooLarge, limit)
	}
	return out.Bytes(), nil
}
