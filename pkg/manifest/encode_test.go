package manifest

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// encodeCases are values that reach every branch of EncodeJSON.
func encodeCases() []any {
	var every strings.Builder
	for b := range 256 {
		every.WriteByte(byte(b))
	}
	return []any{
		nil, true, false, "", "plain", every.String(), "\u2028\u2029 é ☃ 😀", "bad \xff\xfe utf-8 \xe2\x82",
		"<script>&</script>", int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64),
		0.0, math.Copysign(0, -1), 0.5, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, -3.0,
		json.Number("12"), json.Number("1.5e3"),
		map[string]any(nil), map[string]any{}, []any(nil), []any{},
		map[string]any{"b": int64(1), "a": []any{"x", nil, map[string]any{"<": "&", "": true}}, "ä": 2.5, "A": "z"},
		[]any{[]any{}, map[string]any{}, []any{[]any{int64(3)}}},
	}
}

// TestEncodeJSONMatchesMarshal compares EncodeJSON with encoding/json on
// crafted values, on every object of the decoder's test inputs and of the
// translator's golden inputs, and on values encoding/json refuses or
// EncodeJSON leaves to it.
func TestEncodeJSONMatchesMarshal(t *testing.T) {
	values := encodeCases()
	files, _ := filepath.Glob("testdata/decode/*.yaml")
	golden, _ := filepath.Glob("../../services/translator/testdata/*/*.in.yaml")
	if len(files) < 10 || len(golden) < 50 {
		t.Fatalf("test inputs: %d and %d files", len(files), len(golden))
	}
	for _, f := range append(files, golden...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, _ := Decode(f, data)
		for _, o := range objs {
			var v any
			if err := unmarshal(o.JSON, &v); err != nil {
				t.Fatal(err)
			}
			values = append(values, v)
		}
	}
	if len(values) < 300 {
		t.Fatalf("only %d values", len(values))
	}
	for i, v := range values {
		want, wantErr := json.Marshal(v)
		got, err := EncodeJSON(v)
		if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
			t.Errorf("value %d (%.100v): EncodeJSON gives %.300s, %v; encoding/json %.300s, %v", i, v, got, err, want, wantErr)
		}
	}
	for _, v := range []any{math.NaN(), math.Inf(1), json.Number("1x"), map[string]any{"a": []any{math.Inf(-1)}}, struct{ A int }{1}, []string{"a"}} {
		want, wantErr := json.Marshal(v)
		got, err := EncodeJSON(v)
		if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
			t.Errorf("%v: EncodeJSON gives %s, %v; encoding/json %s, %v", v, got, err, want, wantErr)
		}
	}
}

// FuzzEncodeJSON checks EncodeJSON against encoding/json on what JSON
// decodes to, with integers as int64 (as the decoder reads objects) and as
// json.Number (as the file provider reads them).
func FuzzEncodeJSON(f *testing.F) {
	for _, v := range encodeCases() {
		b, err := json.Marshal(v)
		if err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		var preserved any
		if unmarshal(data, &preserved) == nil {
			compareEncodings(t, preserved)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var numbers any
		if dec.Decode(&numbers) == nil {
			compareEncodings(t, numbers)
		}
	})
}

func compareEncodings(t *testing.T, v any) {
	want, wantErr := json.Marshal(v)
	got, err := EncodeJSON(v)
	if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
		t.Fatalf("EncodeJSON gives %s, %v; encoding/json %s, %v", got, err, want, wantErr)
	}
}
