// SPDX-License-Identifier: Apache-2.0
/// The deck used when none is configured (also by `tiltd mqtt` for hosted rounds).
public enum BuiltInDeck {
    /// Twenty foods, a deck that works anywhere.
    public static let deck = try! PromptDeck(
        name: "built-in",
        prompts: [
            "pizza", "sushi", "croissant", "ramen", "falafel", "pretzel", "dumplings", "tacos", "curry", "bagel",
            "paella", "waffles", "lasagne", "pho", "kebab", "pancakes", "risotto", "burrito", "strudel", "noodles",
        ])
}
