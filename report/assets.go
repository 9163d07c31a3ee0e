package report

import _ "embed"

//go:generate sh assets/echarts/update.sh

// echartsGz is echarts 5.4.3 dist/echarts.common.min.js, gzip-compressed; the page
// unpacks it with DecompressionStream. See assets/echarts/VERSIONS for its origin
// and checksums, and LICENSE, NOTICE, LICENSE-zrender and LICENSE-d3 beside it.
//
//go:embed assets/echarts/echarts.common.min.js.gz
var echartsGz []byte

//go:embed assets/page.css
var pageCSS string

//go:embed assets/page.js
var pageJS string
