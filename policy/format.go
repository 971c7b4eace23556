package policy

import "strconv"

// FormatID returns names[id], or typeName(id) like stringer when id is out
// of range. Generated String methods call it.
func FormatID(id int, names []string, typeName string) string {
	if id >= 0 && id < len(names) {
		return names[id]
	}
	return typeName + "(" + strconv.Itoa(id) + ")"
}

// FormatBits returns the names of the bits set in v joined by "|", bit i
// named names[i]; bits without a name follow as typeName(0x...). Zero is "0".
// Generated String methods of fact and output sets call it.
func FormatBits(v uint64, names []string, typeName string) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for i, name := range names {
		if v&(1<<i) == 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, '|')
		}
		b = append(b, name...)
		v &^= 1 << i
	}
	if v != 0 {
		if len(b) > 0 {
			b = append(b, '|')
		}
		b = append(b, typeName...)
		b = append(b, "(0x"...)
		b = strconv.AppendUint(b, v, 16)
		b = append(b, ')')
	}
	return string(b)
}

// TriggerName returns the name of trigger t in family f, or TriggerID(n)
// for a trigger f does not have.
func (f Family) TriggerName(t TriggerID) string {
	return FormatID(int(t), wordNames(f.Triggers), "TriggerID")
}

// FormatFacts returns the names of the facts set in x, as FormatBits does.
func (f Family) FormatFacts(x Facts) string {
	return FormatBits(uint64(x), wordNames(f.Facts), "Facts")
}

// FormatOutputs returns the names of the outputs set in x, as FormatBits
// does.
func (f Family) FormatOutputs(x Outputs) string {
	return FormatBits(uint64(x), wordNames(f.Outputs), "Outputs")
}

func wordNames(words []Word) []string {
	names := make([]string, len(words))
	for i, w := range words {
		names[i] = w.Name
	}
	return names
}
