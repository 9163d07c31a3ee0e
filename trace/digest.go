package trace

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"math"
	"reflect"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Checksums: every file this package writes carries, under MetaDigest, a digest of
// each column's values in row order, of its row count and of its own metadata
// (MetaRun, MetaPart, MetaRunID). Readers verify the columns they read against it
// as they stream them, and the metadata when they open the file, so a flipped bit
// anywhere (a page, a page header, the footer's offsets or schema, the run info)
// that changes a value read is refused, naming the file, instead of turning into
// different numbers. The digest is of the decoded values, not of the bytes: it
// does not depend on how the writer encodes them, and it is what the analysis
// would use. Files written before the digest existed carry none and are read
// unverified. (The Arrow reader does not check Parquet page CRCs; the recorder's
// own reads of parts, through parquet-go, check them as well.)

// ErrCorrupt is wrapped by the error of a file whose data or metadata do not match
// its digest, or whose footer cannot be decoded.
var ErrCorrupt = errors.New("corrupt")

// digestAlg names the hash of a digest.
const digestAlg = "fnv1a64"

// fileDigest is the JSON under MetaDigest.
type fileDigest struct {
	Alg     string            `json:"alg"`
	Rows    int64             `json:"rows"`
	Meta    string            `json:"meta"`
	Columns map[string]string `json:"columns"`
}

// metaDigest is the digest of a file's own metadata values.
func metaDigest(run, part, runID string) string {
	h := fnv.New64a()
	for _, s := range []string{run, part, runID} {
		putBytes(h, []byte(s))
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// putBytes, putFixed and putNull are the canonical encoding of a value: a marker
// (0 null, 1 a value) and the value: a length and bytes, or fixed-size bytes.
func putBytes(h hash.Hash64, b []byte) {
	var buf [1 + binary.MaxVarintLen64]byte
	buf[0] = 1
	n := binary.PutUvarint(buf[1:], uint64(len(b)))
	h.Write(buf[:1+n])
	h.Write(b)
}

func putFixed(h hash.Hash64, v uint64, size int) {
	var buf [9]byte
	buf[0] = 1
	binary.LittleEndian.PutUint64(buf[1:], v)
	h.Write(buf[:1+size])
}

func putNull(h hash.Hash64) { h.Write([]byte{0}) }

// putList begins a list of n values (its values follow, each without a marker).
func putList(h hash.Hash64, n int) {
	var buf [1 + binary.MaxVarintLen64]byte
	buf[0] = 1
	k := binary.PutUvarint(buf[1:], uint64(n))
	h.Write(buf[:1+k])
}

func putElem32(h hash.Hash64, v uint32) {
	var buf [4]byte
	binary.LittleEndian.PutUint32(buf[:], v)
	h.Write(buf[:])
}

// rowDigester computes the column digests of rows of type T as they are written
// (or read back with parquet-go), from the struct fields and their parquet tags.
type rowDigester struct {
	names  []string
	fields []int
	hashes []hash.Hash64
	rows   int64
}

func newRowDigester(t reflect.Type) *rowDigester {
	d := &rowDigester{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if name == "" || name == "-" || !digestible(f.Type) {
			continue
		}
		d.names = append(d.names, name)
		d.fields = append(d.fields, i)
		d.hashes = append(d.hashes, fnv.New64a())
	}
	return d
}

func digestible(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String, reflect.Int32, reflect.Int64, reflect.Float64, reflect.Bool:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Int32
	}
	return false
}

func digesterOf[T any]() *rowDigester { return newRowDigester(reflect.TypeFor[T]()) }

func addRows[T any](d *rowDigester, rows []T) {
	for i := range rows {
		v := reflect.ValueOf(&rows[i]).Elem()
		for k, fi := range d.fields {
			putValue(d.hashes[k], v.Field(fi))
		}
	}
	d.rows += int64(len(rows))
}

func putValue(h hash.Hash64, v reflect.Value) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			putNull(h)
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		putBytes(h, []byte(v.String()))
	case reflect.Int32:
		putFixed(h, uint64(uint32(v.Int())), 4)
	case reflect.Int64:
		putFixed(h, uint64(v.Int()), 8)
	case reflect.Float64:
		putFixed(h, math.Float64bits(v.Float()), 8)
	case reflect.Bool:
		b := uint64(0)
		if v.Bool() {
			b = 1
		}
		putFixed(h, b, 1)
	case reflect.Slice:
		putList(h, v.Len())
		for i := range v.Len() {
			putElem32(h, uint32(v.Index(i).Int()))
		}
	}
}

// digest is the file digest of the rows added, with the metadata digest meta.
func (d *rowDigester) digest(meta string) fileDigest {
	fd := fileDigest{Alg: digestAlg, Rows: d.rows, Meta: meta, Columns: map[string]string{}}
	for k, name := range d.names {
		fd.Columns[name] = fmt.Sprintf("%016x", d.hashes[k].Sum64())
	}
	return fd
}

// parseDigest reads the MetaDigest value of a file (nil, nil when it has none).
func parseDigest(name string, v *string) (*fileDigest, error) {
	if v == nil {
		return nil, nil
	}
	var fd fileDigest
	if err := json.Unmarshal([]byte(*v), &fd); err != nil || fd.Alg != digestAlg || fd.Columns == nil {
		return nil, fmt.Errorf("reading %s: %w: its %s metadata is not a digest this ceiling reads", name, ErrCorrupt, MetaDigest)
	}
	return &fd, nil
}

// verifyMeta checks a file's metadata values against its digest.
func (fd *fileDigest) verifyMeta(name, run, part, runID string) error {
	if fd == nil {
		return nil
	}
	if metaDigest(run, part, runID) != fd.Meta {
		return fmt.Errorf("reading %s: %w: its metadata (the run info) does not match its checksum: the file was damaged", name, ErrCorrupt)
	}
	return nil
}

// verifyRows checks the digest of rows read with parquet-go against the file's.
func verifyRows[T any](name string, fd *fileDigest, rows []T) error {
	if fd == nil {
		return nil
	}
	d := digesterOf[T]()
	addRows(d, rows)
	got := d.digest(fd.Meta)
	if got.Rows != fd.Rows {
		return fmt.Errorf("reading %s: %w: %d rows, its checksum counts %d: the file was damaged", name, ErrCorrupt, got.Rows, fd.Rows)
	}
	for col, want := range fd.Columns {
		if g, ok := got.Columns[col]; ok && g != want {
			return fmt.Errorf("reading %s: %w: column %s does not match its checksum: the file was damaged", name, ErrCorrupt, col)
		}
	}
	return nil
}

// arrowDigester computes the digests of the columns a Scan reads, from the Arrow
// batches, with the same encoding as rowDigester.
type arrowDigester struct {
	fd     *fileDigest
	hashes map[string]hash.Hash64
	rows   int64
}

func newArrowDigester(fd *fileDigest, want []Column) *arrowDigester {
	if fd == nil {
		return nil
	}
	a := &arrowDigester{fd: fd, hashes: map[string]hash.Hash64{}}
	for _, c := range want {
		if _, ok := fd.Columns[c.Name]; ok {
			a.hashes[c.Name] = fnv.New64a()
		}
	}
	return a
}

func (a *arrowDigester) add(rec arrow.Record, cols map[string]int) error {
	if a == nil {
		return nil
	}
	a.rows += rec.NumRows()
	for name, h := range a.hashes {
		i, ok := cols[name]
		if !ok {
			return fmt.Errorf("column %s missing from the batch", name)
		}
		if err := putArray(h, rec.Column(i)); err != nil {
			return fmt.Errorf("column %s: %w", name, err)
		}
	}
	return nil
}

func putArray(h hash.Hash64, arr arrow.Array) error {
	n := arr.Len()
	switch a := arr.(type) {
	case *array.Int32:
		for i := range n {
			if a.IsNull(i) {
				putNull(h)
			} else {
				putFixed(h, uint64(uint32(a.Value(i))), 4)
			}
		}
	case *array.Int64:
		for i := range n {
			if a.IsNull(i) {
				putNull(h)
			} else {
				putFixed(h, uint64(a.Value(i)), 8)
			}
		}
	case *array.Float64:
		for i := range n {
			if a.IsNull(i) {
				putNull(h)
			} else {
				putFixed(h, math.Float64bits(a.Value(i)), 8)
			}
		}
	case *array.Boolean:
		for i := range n {
			switch {
			case a.IsNull(i):
				putNull(h)
			case a.Value(i):
				putFixed(h, 1, 1)
			default:
				putFixed(h, 0, 1)
			}
		}
	case *array.String:
		for i := range n {
			if a.IsNull(i) {
				putNull(h)
			} else {
				putBytes(h, []byte(a.Value(i)))
			}
		}
	case *array.List:
		vals, ok := a.ListValues().(*array.Int32)
		if !ok {
			return fmt.Errorf("list of %s", a.ListValues().DataType())
		}
		offs := a.Offsets()
		var buf []byte // the elements of one list, hashed in one write (the same bytes)
		for i := range n {
			if a.IsNull(i) {
				putNull(h)
				continue
			}
			lo, hi := int(offs[i]), int(offs[i+1])
			putList(h, hi-lo)
			buf = buf[:0]
			for k := lo; k < hi; k++ {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(vals.Value(k)))
			}
			h.Write(buf)
		}
	default:
		return fmt.Errorf("type %s", arr.DataType())
	}
	return nil
}

// verify checks the columns scanned against the file's digest, once the scan is
// complete.
func (a *arrowDigester) verify(name string) error {
	if a == nil {
		return nil
	}
	if a.rows != a.fd.Rows {
		return fmt.Errorf("reading %s: %w: %d rows read, its checksum counts %d: the file was damaged", name, ErrCorrupt, a.rows, a.fd.Rows)
	}
	for col, h := range a.hashes {
		if fmt.Sprintf("%016x", h.Sum64()) != a.fd.Columns[col] {
			return fmt.Errorf("reading %s: %w: column %s does not match its checksum: the file was damaged", name, ErrCorrupt, col)
		}
	}
	return nil
}
