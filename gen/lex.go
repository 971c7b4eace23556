package gen

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tokenKind is the kind of a lexical token.
type tokenKind uint8

const (
	tokIdent   tokenKind = iota + 1 // identifier or keyword
	tokDoc                          // a `##` doc comment line; text is the comment
	tokDash                         // "--"
	tokArrow                        // "-->"
	tokLBrack                       // "["
	tokRBrack                       // "]"
	tokComma                        // ","
	tokBang                         // "!"
	tokSlash                        // "/"
	tokIllegal                      // anything else; text says what
	tokBadDoc                       // a doc comment Go cannot hold; text says why
)

var tokenNames = [...]string{
	tokIdent:   "name",
	tokDoc:     "doc comment",
	tokDash:    "'--'",
	tokArrow:   "'-->'",
	tokLBrack:  "'['",
	tokRBrack:  "']'",
	tokComma:   "','",
	tokBang:    "'!'",
	tokSlash:   "'/'",
	tokIllegal: "illegal character",
	tokBadDoc:  "doc comment",
}

// String names the kind for error messages.
func (k tokenKind) String() string { return tokenNames[k] }

// lexeme is one token of a line: its kind, text and position.
type lexeme struct {
	kind tokenKind
	text string
	pos  Pos
}

// describe names a token for an error message.
func (t lexeme) describe() string {
	switch t.kind {
	case tokIdent:
		return fmt.Sprintf("%q", t.text)
	case tokIllegal:
		return "illegal character " + t.text
	}
	return t.kind.String()
}

// lexLine splits one line (without its newline) into tokens. Comments end a
// line; a line that starts with "##" (but not "###") is a doc comment.
func lexLine(line string, n int) []lexeme {
	if rest, ok := strings.CutPrefix(strings.TrimLeft(line, " \t"), "##"); ok && !strings.HasPrefix(rest, "#") {
		col := strings.Index(line, "##") + 1
		if i, why := badDocChar(line); why != "" {
			return []lexeme{{kind: tokBadDoc, text: why, pos: Pos{n, i + 1}}}
		}
		return []lexeme{{kind: tokDoc, text: strings.TrimSpace(rest), pos: Pos{n, col}}}
	}
	var toks []lexeme
	for i := 0; i < len(line); {
		c := line[i]
		pos := Pos{n, i + 1}
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			return toks
		case isLetter(c):
			j := i + 1
			for j < len(line) && (isLetter(line[j]) || isDigit(line[j]) || line[j] == '_') {
				j++
			}
			toks = append(toks, lexeme{tokIdent, line[i:j], pos})
			i = j
		default:
			t, size := lexPunct(line[i:])
			t.pos = pos
			toks = append(toks, t)
			i += size
		}
	}
	return toks
}

// lexPunct reads the punctuation token at the start of s.
func lexPunct(s string) (lexeme, int) {
	switch {
	case strings.HasPrefix(s, "-->"):
		return lexeme{kind: tokArrow, text: "-->"}, 3
	case strings.HasPrefix(s, "--"):
		return lexeme{kind: tokDash, text: "--"}, 2
	}
	if k, ok := singles[s[0]]; ok {
		return lexeme{kind: k, text: s[:1]}, 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 {
		return lexeme{kind: tokIllegal, text: fmt.Sprintf(`'\x%02x'`, s[0])}, 1
	}
	return lexeme{kind: tokIllegal, text: fmt.Sprintf("%q", r)}, size
}

var singles = map[byte]tokenKind{'[': tokLBrack, ']': tokRBrack, ',': tokComma, '!': tokBang, '/': tokSlash}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// badDocChar finds the first character of a doc comment line that a Go
// comment cannot hold (docs become Go comments): invalid UTF-8, a control
// character other than tab, or a byte order mark. It returns its offset and
// what it is, or "" if there is none.
func badDocChar(line string) (int, string) {
	for i, r := range line {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(line[i:], "\uFFFD"):
			return i, fmt.Sprintf("invalid UTF-8 byte %#x", line[i])
		case r < ' ' && r != '\t' && r != '\r', r == 0x7f:
			return i, fmt.Sprintf("control character %U", r)
		case r == '\uFEFF':
			return i, "a byte order mark"
		}
	}
	return 0, ""
}
