package summary

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/llmrun/llmrun/modules/metrics"
)

// Histogram is a trend's distribution as the result file keeps it: its HDR
// histograms, encoded, with the exact count, sum, sum of squares and
// extremes. Any percentile can be computed from it again (within the
// histograms' 0.1 %), and histograms of several runs merge exactly.
type Histogram struct {
	// Scale is how many histogram units make one unit of the metric
	// (metrics.HistogramScale: 1000, so a Time metric's values are stored
	// in microseconds).
	Scale float64 `json:"scale"`
	// Encoded is the histogram of the values ≥ 0, rounded to 1/Scale, in
	// HdrHistogram's V2 compressed encoding, base64 (hdrhistogram-go's
	// Encode(V2CompressedEncodingCookieBase), readable by every
	// HdrHistogram implementation); "" when there is none.
	Encoded string `json:"encoded"`
	// Negative is the histogram of the negative values' absolute values,
	// encoded likewise; "" when there is none.
	Negative string `json:"negative,omitempty"`
	// Count, Sum, SumSquares, Min and Max are exact.
	Count      int64   `json:"count"`
	Sum        float64 `json:"sum"`
	SumSquares float64 `json:"sum_squares"`
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
}

// NewHistogram keeps a trend's distribution; nil for other types.
func NewHistogram(st *metrics.Stats) *Histogram {
	if st.Type != metrics.Trend {
		return nil
	}
	pos, neg := st.Histograms()
	return &Histogram{Scale: metrics.HistogramScale, Encoded: encodeHDR(pos), Negative: encodeHDR(neg),
		Count: st.Count, Sum: st.Sum, SumSquares: st.SumSquares, Min: st.Min, Max: st.Max}
}

// encodeHDR is a histogram's V2 compressed encoding, "" for none.
func encodeHDR(h *hdr.Histogram) string {
	if h == nil {
		return ""
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		// Encoding into memory fails only for an unknown version.
		panic(fmt.Sprintf("encoding an HDR histogram: %v", err))
	}
	return string(b)
}

// decodeHDR decodes a histogram encodeHDR encoded; nil for "". One of
// another geometry than llmrun's (metrics.CheckGeometry) is refused
// before it is decoded: the counts a decoder allocates follow the
// geometry its header says, 45 MB for a header of 60 bytes.
func decodeHDR(s string) (*hdr.Histogram, error) {
	if s == "" {
		return nil, nil
	}
	if err := checkEncodedGeometry(s); err != nil {
		return nil, err
	}
	return hdr.Decode([]byte(s))
}

// checkEncodedGeometry reads the geometry in the header of s, a V2
// compressed encoding (base64 of a cookie, a length and the zlib stream
// of a 40-byte header and the counts), and checks it is llmrun's; what is
// not such an encoding is left to hdr.Decode to refuse.
func checkEncodedGeometry(s string) error {
	// Whole: the stream's first block may hold a long table before the
	// header; only the header is inflated.
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) < 8 {
		return nil
	}
	z, err := zlib.NewReader(bytes.NewReader(b[8:]))
	if err != nil {
		return nil
	}
	var header struct {
		Cookie, PayloadLength, NormalizingOffset, SigFigs int32
		Lowest, Highest                                   int64
	}
	if binary.Read(z, binary.BigEndian, &header) != nil {
		return nil
	}
	return metrics.CheckGeometry(header.Lowest, header.Highest, int64(header.SigFigs))
}

// Stats decodes the distribution into the trend statistics it was made
// from: the same count, sum, extremes and percentiles.
func (h *Histogram) Stats() (*metrics.Stats, error) {
	if h.Scale != metrics.HistogramScale {
		return nil, fmt.Errorf("histogram scale %g, want %d", h.Scale, metrics.HistogramScale)
	}
	pos, err := decodeHDR(h.Encoded)
	if err != nil {
		return nil, fmt.Errorf("decoding the histogram: %w", err)
	}
	neg, err := decodeHDR(h.Negative)
	if err != nil {
		return nil, fmt.Errorf("decoding the histogram of negative values: %w", err)
	}
	st, err := metrics.StatsFromHistograms(metrics.Stats{Type: metrics.Trend, Count: h.Count, Sum: h.Sum, SumSquares: h.SumSquares, Min: h.Min, Max: h.Max}, pos, neg)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	return st, nil
}

// EncodeHDR is h in the result file's encoding of a histogram (V2
// compressed, base64), "" for none: for another carrier of histograms
// than the result file (the dashboard's figures sent between instances).
func EncodeHDR(h *hdr.Histogram) string { return encodeHDR(h) }

// DecodeHDR decodes what EncodeHDR encoded; nil for "".
func DecodeHDR(s string) (*hdr.Histogram, error) { return decodeHDR(s) }
