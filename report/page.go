package report

import (
	_ "embed"
	"html/template"
)

//go:embed assets/page.html.tmpl
var pageHTML string

// pageTemplate is parsed once; html/template escapes every string by context, so
// model names, error texts and notes are text wherever they appear.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"inc": func(i int) int { return i + 1 },
}).Parse(pageHTML))
