"""A sentence of a quotation that an earlier sentence opened is someone's words without their
name: it leans on the sentence that names them (Candidate.quoted). Text only, no model."""

from __future__ import annotations

from localsidecar.summary.candidates import document_candidates
from localsidecar.summary.references import leans_back
from localsidecar.summary.text import inside_quote

HOFFMAN = (
    "Hoffman hits out at modern film\n\n"
    "Hollywood legend Dustin Hoffman has hit out at the quality of current films and theatre productions.\n\n"
    "He said: \"You go to the cinema and you realise you're watching the third act. There is no first or "
    'second act. "There is this massive film-making where you spend money on the demographic. '
    '"The whole culture is in the craphouse," he said. Hoffman is in the UK to publicise his new comedy.\n'
)


def test_a_sentence_inside_a_quotation_an_earlier_one_opened_is_quoted():
    para = 'He said: "You go to the cinema. There is no second act." Hoffman is in the UK.'
    assert not inside_quote(para, 0)
    assert inside_quote(para, para.index("There is"))
    assert not inside_quote(para, para.index("Hoffman is"))
    curly = "He said: “You go to the cinema. There is no second act.” Hoffman is in the UK."
    assert inside_quote(curly, curly.index("There is")) and not inside_quote(curly, curly.index("Hoffman is"))


def test_a_quoted_sentence_leans_on_the_one_before_it_and_the_narrators_do_not():
    cands = {c.text: c for c in document_candidates(HOFFMAN)}
    act = cands["There is no first or second act."]
    assert act.quoted
    assert leans_back(act, set()) and not leans_back(act, {act.sentence - 1})
    narrator = cands["Hoffman is in the UK to publicise his new comedy."]
    lead = cands[
        "Hollywood legend Dustin Hoffman has hit out at the quality of current films and theatre productions."
    ]
    assert not narrator.quoted and not lead.quoted
    assert not leans_back(narrator, set())
    # a sentence that says who speaks is no one's unnamed words, even inside a quotation
    assert not any(c.quoted for c in cands.values() if "he said" in c.text)
