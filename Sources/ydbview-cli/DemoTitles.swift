import YDBView

/// Generated book titles, one per book number, never the same twice.
///
/// Picking words at random repeated titles as soon as the catalogue had
/// more books than word combinations (256 before; a 300,000-book run showed
/// the same title on many rows, which read as duplicated rows). Here the
/// number is written in mixed radix, one digit per word list, and whatever
/// is left over becomes a ", Book N" suffix: different numbers always give
/// different titles, at any size. The lists are shuffled with the run's seed
/// so that runs still differ from seed to seed and repeat for the same seed.
struct DemoTitles {
    static let adjectives = ["Silent", "Copper", "Hollow", "Winter", "Crimson", "Last", "Hidden", "Broken",
                             "Golden", "Distant", "Burning", "Glass", "Iron", "Sunken", "Wandering", "Pale"]
    static let nouns = ["Harbor", "Gate", "Crown", "River", "Archive", "Garden", "Signal", "Tower",
                        "Orchard", "Engine", "Lantern", "Map", "Bridge", "Empire", "Mirror", "Voyage"]
    static let places = ["Ash", "Salt", "Stars", "Thorns", "Rain", "Embers", "Bones", "Tides",
                         "Dust", "Ivy", "Smoke", "Frost", "Echoes", "Amber", "Storms", "Ravens"]

    let adjectives: [String]
    let nouns: [String]
    let places: [String]

    init(using random: inout SeededGenerator) {
        adjectives = DemoTitles.adjectives.shuffled(using: &random)
        nouns = DemoTitles.nouns.shuffled(using: &random)
        places = DemoTitles.places.shuffled(using: &random)
    }

    /// Every combination of the three lists before any suffix is needed.
    var combinations: Int { adjectives.count * nouns.count * places.count }

    /// The title of book `number` (0 or more).
    func title(_ number: Int) -> String {
        let a = number % adjectives.count
        let b = number / adjectives.count % nouns.count
        let c = number / (adjectives.count * nouns.count) % places.count
        let volume = number / combinations
        // Each word also shifts with the digits below it, so consecutive
        // books differ in more than their first word; for a fixed lower
        // digit the shift is a rotation, so the mapping stays one-to-one.
        let base = "The \(adjectives[a]) \(nouns[(b + a) % nouns.count]) of \(places[(c + b + a) % places.count])"
        return volume == 0 ? base : "\(base), Book \(volume + 1)"
    }
}
