import CorruptFuzzWorker
import Foundation
import Yams

// Loads a YAML document with Yams: `corrupt-fuzz run --worker --target 'yaml-worker @@'`, or
// one file at a time (`yaml-worker FILE`), as AFL++ runs it.
CorruptFuzzWorker.serve { data in
    try Yams.load(yaml: String(decoding: data, as: UTF8.self))
}
