package statuslint

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// viper finds its configuration file by search path and name, so a path
// does not name the document: the instance does. An instance that was read
// (ReadInConfig, MergeInConfig) holds a handle on its document, which
// flows with the instance (into struct fields, through parameters and
// interfaces), and a write by that instance (WriteConfig, WriteConfigAs,
// SafeWriteConfig, SafeWriteConfigAs) is a write of the document it read,
// whatever path WriteConfigAs is given. The package-level functions use
// viper's own instance, one document for the whole program.
const viperPkg = "github.com/spf13/viper"

// viperGlobal is the key of the document of viper's package-level
// instance.
const viperGlobal = viperPkg + ".v.configFile"

// kubeconfigKey is the key of the kubeconfig that client-go's loading
// rules find.
const kubeconfigKey = "k8s.io/client-go/tools/clientcmd.kubeconfig"

// globalDoc returns the key of the document of a library's own instance,
// and how messages name it.
func globalDoc(d docKind) (key, desc string) {
	if d == docKubeconfig {
		return kubeconfigKey, "the kubeconfig"
	}
	return viperGlobal, "the configuration file"
}

// instanceRead reads and decodes the document of an instance that stands
// for its document (opInstanceRead) and gives the instance a handle on it;
// a library's own document is the call's result, decoded.
func (s *fnState) instanceRead(m *modelCall, e libEntry) {
	if e.global {
		k, desc := globalDoc(e.doc)
		s.event(evRead, k, m.instr, desc)
		s.setResult(m.instr, 0, atoms{{Kind: aDecoded, Key: k}})
		return
	}
	k := s.instanceKey(m.arg(0))
	s.event(evRead, k, m.instr, "the configuration file")
	s.store(m.arg(0), atoms{{Kind: aHandle, Key: k, Flag: intArg{Known: true, Val: s.c.os.rdwr}}})
}

// instanceWrite writes the instance's document (opInstanceWrite): the one
// the instance was read from (its handle), or else the one its name
// stands for; with a path argument, the file that argument names too.
func (s *fnState) instanceWrite(m *modelCall, e libEntry) {
	if e.path >= 0 {
		k := s.pathKey(m.arg(e.path), m.instr)
		s.event(evWrite, k, m.instr, s.descs[k])
	}
	if e.global {
		k, desc := globalDoc(e.doc)
		s.event(evWrite, k, m.instr, desc)
		return
	}
	s.event(evWrite, s.instanceKey(m.arg(0)), m.instr, "the configuration file")
	s.writeVia(m.instr, s.atomsOf(m.arg(0)), "the configuration file")
}

// instanceKey returns the key of the document of instance v: an instance
// kept in a package-level variable is that variable's, whatever made it
// (each viper.New() is another).
func (s *fnState) instanceKey(v ssa.Value) string {
	if g := loadedGlobal(v); g != nil {
		return globalKey(g) + ".configFile"
	}
	return s.term(v) + ".configFile"
}

// isViper reports whether t is a viper instance (*viper.Viper), which
// stands for its configuration file.
func isViper(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == viperPkg && n.Obj().Name() == "Viper"
}
