package gen

import "strings"

// exported upper-cases the first letter of a spec name for Go.
func exported(name string) string {
	if name == "" {
		return ""
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// unexported lower-cases the first letter of a spec name for Go.
func unexported(name string) string {
	if name == "" {
		return ""
	}
	return strings.ToLower(name[:1]) + name[1:]
}

// vocabularyNames derives the Go constants of a vocabulary: a family's in
// package policy (prefix "Lane", say), or a machine's own.
type vocabularyNames struct {
	prefix string // exported family or machine name
	qual   string // "policy." when used outside package policy, else ""
}

func (v vocabularyNames) trigger(name string) string { return v.qual + v.prefix + exported(name) }
func (v vocabularyNames) fact(name string) string    { return v.qual + v.prefix + "Fact" + exported(name) }
func (v vocabularyNames) output(name string) string {
	return v.qual + v.prefix + "Output" + exported(name)
}

// goNames derives the Go identifiers of one machine's generated code. The
// validator checks them for clashes so that a spec that validates always
// compiles.
//
// A machine of a family uses the family's vocabulary, generated once in
// package policy (policy.LaneWake, policy.Facts, ...), so that the runtime
// and every policy of the family share one set of typed constants. A
// machine of no family gets trigger, fact and output types of its own.
type goNames struct {
	m      string // exported machine name, the prefix of every exported name
	u      string // unexported machine name, the prefix of every unexported name
	family bool   // the vocabulary is the family's, in package policy
	vocabularyNames
}

func newGoNames(machine, family string) goNames {
	n := goNames{m: exported(machine), u: unexported(machine), family: family != ""}
	n.vocabularyNames = vocabularyNames{prefix: n.m}
	if n.family {
		n.vocabularyNames = vocabularyNames{prefix: exported(family), qual: "policy."}
	}
	return n
}

func (n goNames) stateType() string { return n.m + "State" }
func (n goNames) triggerType() string {
	if n.family {
		return "policy.TriggerID"
	}
	return n.m + "Trigger"
}
func (n goNames) factsType() string {
	if n.family {
		return "policy.Facts"
	}
	return n.m + "Facts"
}
func (n goNames) outputsType() string {
	if n.family {
		return "policy.Outputs"
	}
	return n.m + "Outputs"
}
func (n goNames) resultType() string { return n.m + "Result" }
func (n goNames) stepFunc() string   { return n.m + "Step" }
func (n goNames) policyVar() string  { return n.m + "Policy" }

// configureStateless names the test file's constructor of the equivalent
// stateless machine.
func (n goNames) configureStateless() string { return "configure" + n.m + "Stateless" }

func (n goNames) state(name string) string { return n.m + exported(name) }

// fixed lists the exported names every machine generates, whatever its
// vocabulary.
func (n goNames) fixed() []string {
	names := []string{n.stateType(), n.resultType(), n.stepFunc(), n.policyVar()}
	if !n.family {
		names = append(names, n.triggerType(), n.factsType(), n.outputsType())
	}
	return names
}

func (n goNames) stateNames() string   { return n.u + "StateNames" }
func (n goNames) triggerNames() string { return n.u + "TriggerNames" }
func (n goNames) factNames() string    { return n.u + "FactNames" }
func (n goNames) outputNames() string  { return n.u + "OutputNames" }
func (n goNames) tableVar() string     { return n.u + "Table" }
func (n goNames) policyType() string   { return n.u + "Policy" }
func (n goNames) guardsType() string   { return n.u + "Guards" }
func (n goNames) emitterType() string  { return n.u + "Emitter" }

// when and unless name the stateless guard methods of a fact.
func when(fact string) string   { return "when" + exported(fact) }
func unless(fact string) string { return "unless" + exported(fact) }
