package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// caBundle is the PEM bundle of the image's trusted roots: Mozilla's NSS roots
// as golang.org/x/crypto/x509roots/fallback/bundle ships them. A Go module
// rather than the build machine's /etc/ssl/certs: it is pinned by go.sum, so
// every machine (a Mac has no such file) builds the same image, and it is the
// bundle Go itself falls back to. A root NSS trusts only for certificates issued
// before a date (distrust-after) is left out: a PEM file cannot carry that
// constraint, and trusting the root without it would accept what NSS refuses.
func caBundle() ([]byte, error) {
	var buf bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		cert, err := x509.ParseCertificate(root.Certificate)
		if err != nil {
			return nil, fmt.Errorf("parsing a root of the CA bundle: %w", err)
		}
		fmt.Fprintf(&buf, "# %s\n# sha256 %x\n", cert.Subject, sha256.Sum256(root.Certificate))
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, err
		}
	}
	if buf.Len() == 0 {
		return nil, fmt.Errorf("the CA bundle holds no root")
	}
	return buf.Bytes(), nil
}
