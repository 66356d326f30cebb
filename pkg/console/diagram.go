package console

import "fmt"

// Diagram is a drawing of boxes in columns and the edges between them, for
// an inline SVG: the layout is computed here, the page only draws it.
type Diagram struct {
	Width, Height int
	Boxes         []*Box
	Edges         []Edge
}

// Box is one thing drawn: a graph's node or service, a Gateway, a route,
// a workload.
type Box struct {
	// ID names the box in its edges and in the page (data-id).
	ID string
	// Kind is the small line above the title ("Sequence", "Deployment").
	Kind, Title string
	// State is ok, fail, wait or none; Detail says it in words.
	State, Detail string
	// Rows are lines inside the box (a node's steps), each with an id that
	// edges may leave from.
	Rows []BoxRow
	// TitleLines is the title broken for the box's width (at most two
	// lines, at its hyphens); TitleY the first line's baseline and DetailY
	// the detail's.
	TitleLines      []string
	TitleY, DetailY int
	X, Y, W, H      int
}

// BoxRow is one line inside a box.
type BoxRow struct {
	ID, Text string
	// Y is the line's baseline, absolute.
	Y int
}

// Edge is a line from one box (or a box's row) to another.
type Edge struct {
	From, To string
	// D is the SVG path.
	D     string
	Label string
	// LX, LY place the label.
	LX, LY int
}

// The layout's measures, in pixels.
const (
	boxW, lineH, rowH, titleChars = 230, 16, 20, 27
	gapX, gapY, pad               = 56, 24, 16
)

// layout places columns of boxes left to right, each column's boxes top
// to bottom, sizes the boxes by their rows, and sizes the drawing.
func (d *Diagram) layout(columns [][]*Box) {
	for i, col := range columns {
		y := pad
		for _, b := range col {
			b.X, b.Y, b.W = pad+i*(boxW+gapX), y, boxW
			b.TitleLines = wrapTitle(b.Title, titleChars)
			b.TitleY = b.Y + 34
			b.DetailY = b.TitleY + len(b.TitleLines)*lineH + 2
			for j := range b.Rows {
				b.Rows[j].Y = b.DetailY + (j+1)*rowH
			}
			b.H = b.DetailY - b.Y + len(b.Rows)*rowH + 12
			y += b.H + gapY
			d.Boxes = append(d.Boxes, b)
			d.Height = max(d.Height, y-gapY+pad)
		}
		d.Width = max(d.Width, pad+(i+1)*(boxW+gapX)-gapX+pad)
	}
}

// connect draws an edge from the box (or row) from to the box to: from the
// right side at the row's or the box's middle, to the left side's middle.
func (d *Diagram) connect(from, to, label string) {
	x1, y1, ok1 := d.exit(from)
	x2, y2, ok2 := d.entry(to)
	if !ok1 || !ok2 {
		return
	}
	dx := max((x2-x1)/2, 30)
	d.Edges = append(d.Edges, Edge{From: from, To: to, Label: label,
		D:  fmt.Sprintf("M %d %d C %d %d, %d %d, %d %d", x1, y1, x1+dx, y1, x2-dx, y2, x2, y2),
		LX: (x1 + x2) / 2, LY: (y1+y2)/2 - 6})
}

func (d *Diagram) exit(id string) (x, y int, ok bool) {
	for _, b := range d.Boxes {
		if b.ID == id {
			return b.X + b.W, b.Y + b.H/2, true
		}
		for _, r := range b.Rows {
			if r.ID == id {
				return b.X + b.W, r.Y - 4, true
			}
		}
	}
	return 0, 0, false
}

func (d *Diagram) entry(id string) (x, y int, ok bool) {
	for _, b := range d.Boxes {
		if b.ID == id {
			return b.X, b.Y + 24, true
		}
	}
	return 0, 0, false
}

// clip shortens s to n runes for a line of a box; the box's tooltip keeps
// the whole text.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// wrapTitle breaks a title into at most two lines of n runes, after a
// hyphen where it can: Kubernetes names are hyphenated words.
func wrapTitle(s string, n int) []string {
	r := []rune(s)
	if len(r) <= n {
		return []string{s}
	}
	cut := n
	for i := n; i > n/2; i-- {
		if r[i-1] == '-' || r[i-1] == '/' || r[i-1] == '.' {
			cut = i
			break
		}
	}
	return []string{string(r[:cut]), clip(string(r[cut:]), n)}
}
