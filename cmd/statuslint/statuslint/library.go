package statuslint

// The library table: what the functions of the libraries programs touch
// documents with do, for calls whose bodies are not analysed (the standard
// library) or that the analysis of a body would get wrong (decoders that
// fill by reflection, file systems behind interfaces, configuration
// libraries that find their file by search path). Each entry names
// functions by import path and name, never by a name alone, and says what
// a call of them does with its arguments (counted from 0, the receiver
// first for a method). Add a library here; models.go applies the entries
// and needs no change unless a new kind of effect is needed. The -readers,
// -writers and -lockers flags add entries of the same kinds for one run.
var library = []libEntry{
	// The standard library's file APIs.
	{pkgs: []string{"os", "io/ioutil"}, names: []string{"ReadFile"}, op: opRead, path: 0},
	{pkgs: []string{"io/ioutil"}, names: []string{"WriteFile"}, op: opWriteInPlace, path: 0, what: "ioutil.WriteFile truncates"},
	{pkgs: []string{"os"}, names: []string{"WriteFile"}, op: opWriteInPlace, path: 0, what: "os.WriteFile truncates"},
	{pkgs: []string{"os"}, names: []string{"Open"}, op: opOpen, path: 0, flags: flagsRead},
	{pkgs: []string{"os"}, names: []string{"Create"}, op: opOpen, path: 0, flags: flagsCreate, what: "os.Create truncates"},
	{pkgs: []string{"os"}, names: []string{"OpenFile"}, op: opOpen, path: 0, flags: flagsArg, flagArg: 1, what: "os.OpenFile with O_TRUNC truncates"},
	{pkgs: []string{"os"}, names: []string{"CreateTemp"}, op: opTemp},
	{pkgs: []string{"io/ioutil"}, names: []string{"TempFile"}, op: opTemp},
	{pkgs: []string{"os"}, names: []string{"Rename"}, op: opRename, from: 0, to: 1},
	{pkgs: []string{"os"}, names: []string{"Truncate"}, op: opWrite, path: 0},
	{pkgs: []string{"os"}, names: []string{"Remove"}, op: opRemove, path: 0},
	{pkgs: []string{"io", "io/ioutil"}, names: []string{"ReadAll"}, op: opContent, from: 0},

	// A network response is what a server sent: nothing of a file the
	// program read or names (the client, its proxy, the URL) is in it.
	{pkgs: []string{"net/http"}, names: []string{"Get", "Head", "Post", "PostForm",
		"Client.Get", "Client.Head", "Client.Post", "Client.PostForm", "Client.Do"}, op: opNone},

	// Codecs: their decoders fill by reflection.
	{pkgs: codecs, names: []string{"Unmarshal", "UnmarshalStrict", "Decoder.Decode"}, op: opDecode, from: 0, to: 1},
	{pkgs: codecs, names: []string{"NewDecoder"}, op: opContent, from: 0},
	{pkgs: []string{"encoding/binary"}, names: []string{"Read"}, op: opDecode, from: 0, to: 2},
	{pkgs: encoders, names: []string{"Marshal", "MarshalIndent"}, op: opEncode, from: 0},
	{pkgs: []string{burntSushi}, names: []string{"Decode", "DecodeReader"}, op: opDecode, from: 0, to: 1},
	// A stream encoder writes what it encodes to the writer it was made
	// with: a document encoded into a buffer is in the buffer.
	{pkgs: streamEncoders, names: []string{"NewEncoder"}, op: opEncoder, from: 0},
	{pkgs: streamEncoders, names: []string{"Encoder.Encode"}, op: opEncodeTo, from: 1, to: 0},
	{pkgs: []string{burntSushi}, names: []string{"DecodeFile"}, op: opDecodeFile, path: 0, to: 1},

	// File systems behind interfaces (afero, go-billy), whose
	// implementations are in other packages than the helpers that call
	// them. A file of afero is keyed by its name, whatever the file
	// system; one of go-billy, whose file systems are rooted in a
	// directory (osfs.New(dir), Chroot), by its name under that file
	// system: the same name in two repositories is two files.
	{pkgs: []string{afero}, names: []string{"ReadFile", "Afero.ReadFile"}, op: opRead, path: 1},
	{pkgs: []string{afero}, names: []string{"WriteFile", "Afero.WriteFile"}, op: opWriteInPlace, path: 1, what: "afero.WriteFile truncates"},
	{pkgs: []string{billyUtil}, names: []string{"ReadFile"}, rooted: true, op: opRead, path: 1},
	{pkgs: []string{billyUtil}, names: []string{"WriteFile"}, rooted: true, op: opWriteInPlace, path: 1, what: "util.WriteFile truncates"},
	{pkgs: []string{afero}, names: []string{"Fs.Open"}, op: opOpen, path: 1, flags: flagsRead},
	{pkgs: []string{afero}, names: []string{"Fs.Create"}, op: opOpen, path: 1, flags: flagsCreate, what: "Create truncates"},
	{pkgs: []string{afero}, names: []string{"Fs.OpenFile"}, op: opOpen, path: 1, flags: flagsArg, flagArg: 2, what: "OpenFile with O_TRUNC truncates"},
	{pkgs: []string{afero}, names: []string{"Fs.Rename"}, op: opRename, from: 1, to: 2},
	{pkgs: []string{billy}, names: []string{"Basic.Open", "Filesystem.Open"}, rooted: true, op: opOpen, path: 1, flags: flagsRead},
	{pkgs: []string{billy}, names: []string{"Basic.Create", "Filesystem.Create"}, rooted: true, op: opOpen, path: 1, flags: flagsCreate, what: "Create truncates"},
	{pkgs: []string{billy}, names: []string{"Basic.OpenFile", "Filesystem.OpenFile"}, rooted: true, op: opOpen, path: 1, flags: flagsArg, flagArg: 2, what: "OpenFile with O_TRUNC truncates"},
	{pkgs: []string{billy}, names: []string{"Basic.Rename", "Filesystem.Rename"}, rooted: true, op: opRename, from: 1, to: 2},

	// viper finds its file by search path and name: the instance stands
	// for its document (see viper.go). The package-level functions use
	// viper's own instance.
	{pkgs: []string{viperPkg}, names: []string{"Viper.ReadInConfig", "Viper.MergeInConfig"}, op: opInstanceRead, doc: docViper},
	{pkgs: []string{viperPkg}, names: []string{"ReadInConfig", "MergeInConfig"}, op: opInstanceRead, doc: docViper, global: true},
	{pkgs: []string{viperPkg}, names: []string{"Viper.WriteConfig", "Viper.SafeWriteConfig"}, op: opInstanceWrite, doc: docViper, path: -1},
	{pkgs: []string{viperPkg}, names: []string{"WriteConfig", "SafeWriteConfig"}, op: opInstanceWrite, doc: docViper, global: true, path: -1},
	{pkgs: []string{viperPkg}, names: []string{"Viper.WriteConfigAs", "Viper.SafeWriteConfigAs"}, op: opInstanceWrite, doc: docViper, path: 1},
	{pkgs: []string{viperPkg}, names: []string{"WriteConfigAs", "SafeWriteConfigAs"}, op: opInstanceWrite, doc: docViper, global: true, path: 0},
	{pkgs: []string{viperPkg}, names: viperValues, op: opNone},
	{pkgs: []string{viperPkg}, names: viperMethods(viperValues), op: opNone},
	{pkgs: []string{viperPkg}, names: []string{"Viper.ReadConfig", "Viper.MergeConfig"}, op: opInstanceFrom, from: 1, doc: docViper},
	{pkgs: []string{viperPkg}, names: []string{"Viper.AllSettings"}, op: opInstanceDoc, doc: docViper},
	{pkgs: []string{viperPkg}, names: []string{"AllSettings"}, op: opInstanceDoc, doc: docViper, global: true},

	// client-go's kubeconfig: the loading rules find the file (KUBECONFIG,
	// ~/.kube/config, an explicit path), so the reads through them and
	// ModifyConfig, which writes what they found, are of one document, the
	// kubeconfig. ModifyConfig's own lock covers only its re-read: a
	// caller's earlier read is outside it.
	{pkgs: []string{clientcmd}, names: []string{"ConfigAccess.GetStartingConfig", "PathOptions.GetStartingConfig",
		"ClientConfigLoadingRules.GetStartingConfig", "ClientConfigLoadingRules.Load",
		"ClientConfig.RawConfig", "DeferredLoadingClientConfig.RawConfig"}, op: opInstanceRead, doc: docKubeconfig, global: true},
	{pkgs: []string{clientcmd}, names: []string{"ModifyConfig"}, op: opInstanceWrite, doc: docKubeconfig, global: true, path: -1},
	{pkgs: []string{clientcmd}, names: []string{"LoadFromFile"}, op: opReadDecoded, path: 0},
	{pkgs: []string{clientcmd}, names: []string{"Load"}, op: opParse, from: 0},
	{pkgs: []string{clientcmd}, names: []string{"WriteToFile"}, op: opWrite, path: 1},
	{pkgs: []string{clientcmd}, names: []string{"Write"}, op: opEncode, from: 0},

	// koanf: a file provider holds the file's content; Load decodes what
	// the provider holds into the instance.
	{pkgs: []string{"github.com/knadh/koanf/providers/file"}, names: []string{"Provider"}, op: opRead, path: 0},
	{pkgs: []string{"github.com/knadh/koanf", "github.com/knadh/koanf/v2"}, names: []string{"Koanf.Load"}, op: opDecode, from: 1, to: 0},

	// INI files (gopkg.in/ini.v1): a File loaded from a path is that
	// file's document, and SaveTo writes it in place (ioutil.WriteFile).
	{pkgs: []string{iniPkg}, names: []string{"Load", "LooseLoad", "InsensitiveLoad", "ShadowLoad"}, op: opReadDecoded, path: 0},
	{pkgs: []string{iniPkg}, names: []string{"LoadSources"}, op: opReadDecoded, path: 1},
	{pkgs: []string{iniPkg}, names: []string{"File.SaveTo", "File.SaveToIndent"}, op: opWriteInPlace, path: 1, what: "ini.File.SaveTo truncates"},

	// File locks.
	{pkgs: []string{"syscall", "golang.org/x/sys/unix"}, names: []string{"Flock"}, op: opFlock, flagArg: 1},
	{pkgs: []string{"syscall", "golang.org/x/sys/unix"}, names: []string{"FcntlFlock"}, op: opFcntl, flagArg: 2},
	{pkgs: []string{"golang.org/x/sys/windows"}, names: []string{"LockFileEx"}, op: opLock},
	{pkgs: []string{"golang.org/x/sys/windows"}, names: []string{"UnlockFileEx"}, op: opUnlock},

	// This module.
	{pkgs: []string{statusPkg}, names: []string{"Load"}, op: opReadDecoded, path: 1},
	{pkgs: []string{statusPkg}, names: []string{"Store.Load", "Store.LoadExisting"}, op: opReadDecoded, path: 0, store: true},
	{pkgs: []string{fsPkg}, names: []string{"WriteAtomic", "WriteAtomicNoFollow"}, op: opWrite, path: 0},
	{pkgs: []string{fsPkg}, names: []string{"WriteAtomicFrom"}, op: opWrite, path: 1},
	{pkgs: []string{fsPkg}, names: []string{"ReadRegular"}, op: opRead, path: 0},
	{pkgs: []string{fsPkg}, names: []string{"Fs.ReadFile"}, op: opRead, path: 1, rooted: true},
	{pkgs: []string{fsPkg}, names: []string{"Fs.Open"}, op: opOpen, path: 1, rooted: true, flags: flagsRead},
	{pkgs: []string{fsPkg}, names: []string{"Fs.WriteAtomic", "Fs.Append"}, op: opWrite, path: 1, rooted: true},
	{pkgs: []string{fsPkg}, names: []string{"Fs.WriteAtomicFrom", "Fs.Rename"}, op: opWrite, path: 2, rooted: true},
}

// viperValues are viper's functions that get, set and configure values in
// memory: they touch no file.
var viperValues = []string{"Get", "GetString", "GetBool", "GetInt", "GetInt32", "GetInt64", "GetUint",
	"GetUint64", "GetFloat64", "GetDuration", "GetTime", "GetStringSlice", "GetIntSlice", "GetStringMap",
	"GetStringMapString", "GetStringMapStringSlice", "GetSizeInBytes", "IsSet", "InConfig", "AllKeys",
	"Set", "SetDefault", "SetConfigFile", "SetConfigName", "SetConfigType", "AddConfigPath",
	"ConfigFileUsed", "SetEnvPrefix", "AutomaticEnv", "BindEnv", "BindPFlag", "BindPFlags", "SetEnvKeyReplacer"}

// viperMethods names the methods of *viper.Viper with the names of
// viper's package-level functions.
func viperMethods(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "Viper." + n
	}
	return out
}

// Import paths the table names more than once.
const (
	afero      = "github.com/spf13/afero"
	billy      = "github.com/go-git/go-billy/v5"
	billyUtil  = "github.com/go-git/go-billy/v5/util"
	burntSushi = "github.com/BurntSushi/toml"
	clientcmd  = "k8s.io/client-go/tools/clientcmd"
	iniPkg     = "gopkg.in/ini.v1"
)

var (
	// codecs decode by reflection.
	codecs = []string{"encoding/json", "encoding/xml", "encoding/gob",
		"gopkg.in/yaml.v2", "gopkg.in/yaml.v3", "go.yaml.in/yaml/v2", "go.yaml.in/yaml/v3",
		"sigs.k8s.io/yaml", "github.com/ghodss/yaml", "github.com/goccy/go-yaml",
		burntSushi, "github.com/pelletier/go-toml", "github.com/pelletier/go-toml/v2"}
	// streamEncoders have a NewEncoder(w) whose Encode writes to w.
	streamEncoders = []string{"encoding/json", "encoding/xml", "gopkg.in/yaml.v2", "gopkg.in/yaml.v3",
		"go.yaml.in/yaml/v2", "go.yaml.in/yaml/v3", "github.com/goccy/go-yaml", burntSushi,
		"github.com/pelletier/go-toml", "github.com/pelletier/go-toml/v2"}
	// encoders read what they are given and fill nothing.
	encoders = []string{"encoding/json", "encoding/xml",
		"gopkg.in/yaml.v2", "gopkg.in/yaml.v3", "go.yaml.in/yaml/v2", "go.yaml.in/yaml/v3",
		"sigs.k8s.io/yaml", "github.com/ghodss/yaml", "github.com/goccy/go-yaml",
		"github.com/pelletier/go-toml/v2"}
)

// A libEntry says what calls of some functions do. Argument positions count
// the receiver of a method as argument 0; -1 is none.
type libEntry struct {
	pkgs  []string // import paths
	names []string // Func, Type.Method or Interface.Method in each of pkgs
	op    libOp

	path    int  // the argument that names the file (opRead ... opInstanceWrite)
	rooted  bool // the path is relative to the receiver (a sandboxed file system)
	from    int  // the argument read (opDecode, opEncode, opContent, opRename)
	to      int  // the argument filled or written (opDecode, opDecodeFile, opRename)
	flags   flagSet
	flagArg int    // the argument that gives open flags (flagsArg) or a lock operation (opFlock, opFcntl)
	what    string // how a truncating write is named in messages
	doc     docKind
	global  bool // opInstance*: the library's own instance
	store   bool // opReadDecoded: the path is that of the status.Store argument path is
}

// A libOp is what a call does.
type libOp uint8

const (
	opRead          libOp = iota + 1 // returns the content of the file path names
	opReadDecoded                    // returns the document at path, decoded
	opWrite                          // replaces the file path names
	opWriteInPlace                   // writes the file path names in place, truncating it (what)
	opOpen                           // returns a handle on the file path names, opened with flags
	opTemp                           // returns a handle on a new temporary file
	opRename                         // renames the file from names over the file to names (a write of to)
	opRemove                         // removes the file path names: a lock file's release
	opContent                        // returns the content of what argument from holds (io.ReadAll, NewDecoder)
	opDecode                         // decodes what argument from holds into argument to
	opDecodeFile                     // decodes the file path names into argument to
	opParse                          // returns what argument from holds, decoded
	opEncode                         // returns what argument from holds, encoded
	opInstanceRead                   // reads and decodes the document its receiver (or the global instance) stands for
	opInstanceWrite                  // writes that document, and the file path names if path >= 0
	opInstanceDoc                    // returns that document, decoded (viper's AllSettings)
	opInstanceFrom                   // the receiver takes the document that what argument from holds was encoded from (viper's ReadConfig of a reader)
	opEncoder                        // returns an encoder that writes to argument from (NewEncoder)
	opEncodeTo                       // encodes argument from into what encoder to writes to (Encoder.Encode)
	opNone                           // touches no file (a value's getter or setter)
	opFlock                          // flock(2): takes or releases a lock, as argument flagArg says
	opFcntl                          // fcntl(2) F_SETLK: the Type field of the struct argument flagArg points to says
	opLock                           // takes a file lock
	opUnlock                         // releases the file locks
)

// A flagSet is how a file is opened.
type flagSet uint8

const (
	flagsRead   flagSet = iota + 1 // O_RDONLY
	flagsCreate                    // O_RDWR|O_CREATE|O_TRUNC
	flagsArg                       // as argument flagArg says
)

// A docKind is a library whose instances stand for their documents.
type docKind uint8

const (
	docViper      docKind = iota + 1
	docKubeconfig         // client-go's: its loading rules find the file
)

// The methods of *os.File that matter, and through which an interface
// value holding a handle reaches the file.
type fileMethod uint8

const (
	fmWrite fileMethod = iota + 1 // writes the file
	fmRead                        // reads the file into its first argument
	fmSame                        // returns (a name or descriptor of) the file
)

var fileMethods = map[string]fileMethod{
	"Write": fmWrite, "WriteString": fmWrite, "WriteAt": fmWrite, "ReadFrom": fmWrite, "Truncate": fmWrite,
	"Read": fmRead, "ReadAt": fmRead,
	"Name": fmSame, "Fd": fmSame,
}

// samePath lists the functions whose result names the file their argument
// names: a symbolic link resolved, a path made absolute or cleaned.
var samePath = map[string]bool{
	key("path/filepath", "EvalSymlinks"): true,
	key("path/filepath", "Abs"):          true,
	key("path/filepath", "Clean"):        true,
	key("path", "Clean"):                 true,
}

// A pathOp is what a function of pathOps does with the path or paths its
// arguments name (see lineage.go).
type pathOp uint8

const (
	opSplit  pathOp = iota + 1 // its first argument split into a list of paths
	opDir                      // the directory of its first argument
	opBase                     // the last element of its first argument
	opJoin                     // its variadic arguments joined into one path
	opFormat                   // its arguments after the format, joined by pathFormat
)

var pathOps = map[string]pathOp{
	key("strings", "Split"):           opSplit,
	key("path/filepath", "SplitList"): opSplit,
	key("path/filepath", "Dir"):       opDir,
	key("path", "Dir"):                opDir,
	key("path/filepath", "Base"):      opBase,
	key("path", "Base"):               opBase,
	key("path/filepath", "Join"):      opJoin,
	key("path", "Join"):               opJoin,
	key("fmt", "Sprintf"):             opFormat,
}

// pathFormat is the format with which an opFormat call joins two paths.
const pathFormat = "%s/%s"
