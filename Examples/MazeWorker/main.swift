import CorruptFuzzWorker
import MazeLoader

// The maze loader as a persistent worker: `corrupt-fuzz run --target '.build/debug/maze-worker @@' --worker`.
CorruptFuzzWorker.serve { data in try MazeLoader.load(data) }
