package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// field is one named value of a record, in output order. omit drops it
// from JSON (not from CSV, whose columns are fixed).
type field struct {
	name  string
	value any
	omit  bool
}

// record is the fields of one output object, in order.
type record []field

func (r *record) add(name string, value any) { *r = append(*r, field{name: name, value: value}) }

// opt adds a field that JSON leaves out when it is the zero value.
func (r *record) opt(name string, value any) {
	zero := value == nil || reflect.ValueOf(value).IsZero()
	*r = append(*r, field{name: name, value: value, omit: zero})
}

// writeJSON writes r as one JSON object on one line.
func (r record) writeJSON(w io.Writer) error {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, f := range r {
		if f.omit {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := encode(&b, f.name); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := encode(&b, f.value); err != nil {
			return err
		}
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// encode appends the compact JSON of v to b (no HTML escaping).
func encode(b *bytes.Buffer, v any) error {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Write(bytes.TrimRight(tmp.Bytes(), "\n"))
	return nil
}

// csvHeader returns the column names of r: a parameter list becomes one
// column per parameter, "params.NAME".
func (r record) csvHeader() []string {
	var h []string
	for _, f := range r {
		if ps, ok := f.value.(paramList); ok {
			for _, p := range ps {
				h = append(h, f.name+"."+p.Name)
			}
			continue
		}
		h = append(h, f.name)
	}
	return h
}

// csvRow returns the values of r as CSV cells: numbers as in JSON,
// lists joined by spaces, objects as JSON, nil empty.
func (r record) csvRow() []string {
	var row []string
	for _, f := range r {
		if ps, ok := f.value.(paramList); ok {
			for _, p := range ps {
				row = append(row, csvCell(p.Value))
			}
			continue
		}
		row = append(row, csvCell(f.value))
	}
	return row
}

func csvCell(v any) string {
	if rv := reflect.ValueOf(v); rv.IsValid() {
		switch rv.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			if rv.IsNil() { // JSON's null: an empty cell
				return ""
			}
		}
	}
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case *float64:
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'f', -1, 64)
	case []string:
		return strings.Join(x, " ")
	}
	var b bytes.Buffer
	if err := encode(&b, v); err != nil {
		return fmt.Sprint(v)
	}
	return b.String()
}
