"""The rule that picks each fusion's default dense weight from the quality bench's grids."""

from bench.quality.choice import best_weight, chosen

QUERIES = [f"q{n}" for n in range(10)]


def flat(score: float) -> dict[str, float]:
    return dict.fromkeys(QUERIES, score)


def test_the_weight_best_over_both_collections_wins_not_either_ones() -> None:
    grid = {
        "vaswani": {0.2: flat(0.40), 0.4: flat(0.50), 0.6: flat(0.52)},
        "long": {0.2: flat(0.40), 0.4: flat(0.38), 0.6: flat(0.30)},
    }
    assert best_weight(grid, set(QUERIES)) == 0.4
    record = chosen(grid)
    assert record["dense_weight"] == 0.4 and record["folds_chose"] == [0.4] * 5
    assert record["ndcg@10"] == {"vaswani": 0.5, "long": 0.38}
    assert record["held_out_ndcg@10"] == {"vaswani": 0.5, "long": 0.38}


def test_held_out_scores_a_fold_with_the_weight_the_other_folds_chose() -> None:
    """One query favours 0.6 so much that it decides the choice when it is in training data;
    held out, its fold is scored with the weight the rest chose (0.2)."""
    lopsided = {0.2: flat(0.5) | {"q0": 0.0}, 0.6: flat(0.4) | {"q0": 1.0}}
    record = chosen({"vaswani": lopsided, "long": lopsided})
    assert record["dense_weight"] == 0.6
    assert record["folds_chose"].count(0.2) == 1
    assert record["held_out_ndcg@10"]["vaswani"] < record["ndcg@10"]["vaswani"]
