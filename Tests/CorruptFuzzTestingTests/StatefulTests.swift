import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzTesting
import Testing

/// A habit app's editing actions; `addDay` has the bug such code has: it appends without
/// keeping the days in order, so a day logged late breaks the file's strictly-increasing rule.
let habitActions: [DocumentAction<HabitDocument>] = [
    DocumentAction("addHabit") { doc, rng in
        let name = ["Run", "Read", "Floss", "Méditer"][rng.below(4)]
        doc.habits.append(Habit(name: name, days: []))
        return "addHabit(\"\(name)\")"
    },
    DocumentAction("removeHabit") { doc, rng in
        guard !doc.habits.isEmpty else { return nil }
        let index = rng.below(doc.habits.count)
        doc.habits.remove(at: index)
        return "removeHabit(\(index))"
    },
    DocumentAction("logToday") { doc, rng in
        guard !doc.habits.isEmpty else { return nil }
        let index = rng.below(doc.habits.count)
        let today = (doc.habits[index].days.last ?? 20_000) + 1
        doc.habits[index].days.append(today)
        return "logToday(habit: \(index))"
    },
    DocumentAction("addDay") { doc, rng in
        guard !doc.habits.isEmpty else { return nil }
        let index = rng.below(doc.habits.count)
        let day = Int32(20_000 + rng.below(30))
        if !doc.habits[index].days.contains(day) { doc.habits[index].days.append(day) }  // bug: not sorted
        return "addDay(\(day), habit: \(index))"
    },
]

/// Validates the whole document, through the encoder and the reference validator.
@Sendable func validateDocument(_ doc: HabitDocument) -> String? {
    HabitTracker.validate(HabitTracker.encode(doc))?.description
}

@Suite("CorruptFuzzTesting: stateful testing")
struct StatefulTests {
    @Test("finds the first action that corrupts a document and shrinks the sequence to it")
    func findsAndShrinks() throws {
        let found = verifyStatefulChanges(initial: { HabitDocument(habits: []) }, actions: habitActions, seed: 1, validate: validateDocument)
        let failure = try #require(found)
        print(failure)
        // The shortest story: a habit, two days (the second earlier than the first).
        #expect(failure.steps.count == 3, "\(failure)")
        #expect(failure.steps.first?.hasPrefix("addHabit") == true)
        #expect(failure.steps.last?.hasPrefix("addDay") == true)
        #expect(failure.message.contains("is not after"))
        #expect(failure.originalLength >= failure.steps.count)
    }

    @Test("correct actions keep the document valid")
    func correctActionsPass() {
        let correct = habitActions.filter { $0.name != "addDay" }
        #expect(verifyStatefulChanges(initial: { HabitDocument(habits: []) }, actions: correct, runs: 300, validate: validateDocument) == nil)
    }

    @Test("the same seed finds the same sequence")
    func deterministic() {
        let a = verifyStatefulChanges(initial: { HabitDocument(habits: []) }, actions: habitActions, seed: 9, validate: validateDocument)
        let b = verifyStatefulChanges(initial: { HabitDocument(habits: []) }, actions: habitActions, seed: 9, validate: validateDocument)
        #expect(a?.steps == b?.steps)
    }
}
