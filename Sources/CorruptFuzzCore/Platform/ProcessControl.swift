import CCorruptFuzzSpawn

/// What a session asks of the operating system about its own process: interrupts (Ctrl-C,
/// SIGTERM) as a flag to poll, and adopting the processes targets leave behind (a subreaper on
/// Linux; elsewhere nothing, and the report counts none). The C side is in CCorruptFuzzSpawn.
public enum ProcessControl {
    /// Turns SIGINT and SIGTERM into ``interrupted`` (the first of each; a second one kills).
    public static func installInterruptHandler() { cf_install_interrupt_handler() }

    /// Whether an interrupt arrived since ``installInterruptHandler()``.
    public static var interrupted: Bool { cf_interrupted() != 0 }

    /// Makes this process the one that orphaned descendants of targets are re-parented to, so
    /// that a campaign can kill them. Returns whether the platform allowed it.
    @discardableResult
    public static func becomeSubreaper() -> Bool { cf_become_subreaper() == 0 }
}
