"""A sentence that opens on a definite noun the sentence before it says ("... a police box
in which his clothes were stored. The box had come from ...") names what that sentence
introduced, and one that calls someone by nationality ('"I felt good," said the American.')
names them there: both lean on the sentence before (Candidate.echoes, needs_antecedent).
Text only, no model."""

from __future__ import annotations

from localsidecar.summary.candidates import document_candidates
from localsidecar.summary.references import leans_back, needs_antecedent
from localsidecar.summary.text import echoes

TRIAL = (
    "Actor's gun evidence heard\n\n"
    "An expert told the court that traces on the actor's hands could have come from many places. "
    "They could have come from a police box in which his clothes were later stored.\n\n"
    "The box had come from an area where officers went after being on the firing range. "
    "Officers said the range, which opened in March, will close in June.\n\n"
    "The court will sit again on Monday."
)


def test_a_definite_noun_the_sentence_before_says_echoes_it():
    assert echoes(
        "The box had come from an area.", "They came from a police box in which clothes were stored."
    )
    assert echoes(
        "The new service, which began in March, ends soon.", "It runs the London to Brighton service."
    )
    assert echoes("The adaptation, about a conman, will air.", "Two adaptations are lined up this winter.")
    assert not echoes("The box had come from an area.", "They came from a police van.")
    assert not echoes("The court will sit again.", "")
    assert not echoes("Police found the box.", "They came from a police box.")  # no opening 'The'


def test_a_sentence_echoing_the_one_before_leans_back_unless_that_one_is_in_the_summary():
    cands = {c.text: c for c in document_candidates(TRIAL, notes=False)}
    box = cands["The box had come from an area where officers went after being on the firing range."]
    assert box.echoes
    assert leans_back(box, set()) and not leans_back(box, {box.sentence - 1})
    court = cands["The court will sit again on Monday."]
    assert not court.echoes  # 'court' is not in the sentence right before it


def test_someone_called_by_nationality_is_named_in_the_sentence_before():
    assert needs_antecedent('"I felt pretty good," said the American.')
    assert needs_antecedent("The Kenyan has won the race twice.")
    assert not needs_antecedent("Andre Agassi, the American, won in straight sets.")
    assert not needs_antecedent("The American economy grew by 3% last year.")
    assert not needs_antecedent("British sales rose, the retailer said.")


def test_a_speaker_said_at_the_end_or_a_description_without_a_name_is_named_before():
    assert needs_antecedent("The issue would be debated in Parliament next Monday as scheduled he insisted.")
    assert not needs_antecedent("Mr Clarke said he insisted on a vote next Monday.")
    assert needs_antecedent(
        "The world's largest maker of chips for mobile phones believes the market will grow."
    )
    assert not needs_antecedent("The world's largest carmaker, Toyota, said profits rose.")
