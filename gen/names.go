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

// goNames derives the Go identifiers of one machine's generated code. The
// validator checks them for clashes so that a spec that validates always
// compiles.
type goNames struct {
	m string // exported machine name, the prefix of every exported name
	u string // unexported machine name, the prefix of every unexported name
}

func newGoNames(machine string) goNames {
	return goNames{m: exported(machine), u: unexported(machine)}
}

func (n goNames) stateType() string   { return n.m + "State" }
func (n goNames) triggerType() string { return n.m + "Trigger" }
func (n goNames) factsType() string   { return n.m + "Facts" }
func (n goNames) outputsType() string { return n.m + "Outputs" }
func (n goNames) resultType() string  { return n.m + "Result" }
func (n goNames) stepFunc() string    { return n.m + "Step" }
func (n goNames) policyVar() string   { return n.m + "Policy" }
func (n goNames) tableFunc() string   { return n.m + "Table" }
func (n goNames) newStateless() string {
	return "New" + n.m + "Stateless"
}
func (n goNames) configureStateless() string {
	return "Configure" + n.m + "Stateless"
}

func (n goNames) state(name string) string   { return n.m + exported(name) }
func (n goNames) trigger(name string) string { return n.m + exported(name) }
func (n goNames) fact(name string) string    { return n.m + "Fact" + exported(name) }
func (n goNames) output(name string) string  { return n.m + "Output" + exported(name) }

// fixed lists the exported names every machine generates, whatever its
// vocabulary.
func (n goNames) fixed() []string {
	return []string{
		n.stateType(), n.triggerType(), n.factsType(), n.outputsType(), n.resultType(),
		n.stepFunc(), n.policyVar(), n.tableFunc(), n.newStateless(), n.configureStateless(),
	}
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
