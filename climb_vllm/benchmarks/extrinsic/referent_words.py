"""The words the referent rules read: relatives, roles, and the verbs and states that tell a
patient from someone who cares for them (:mod:`~climb_vllm.benchmarks.extrinsic.referents`).

Each list was written from general clinical English and measured on the labelled excerpts in
``tests/golden/counterfactual/`` (PERFORMANCE.md); a word is listed only when it nearly always
points one way in a note.
"""

from __future__ import annotations

KIN_MALE = frozenset(
    "father dad brother son grandfather grandson uncle nephew husband boyfriend stepfather "
    "stepson brothers sons".split()
)
KIN_FEMALE = frozenset(
    "mother mom sister daughter grandmother granddaughter aunt niece wife girlfriend "
    "stepmother stepdaughter landlady sisters daughters".split()
)
# People of either sex named by their role (the sex is not known from the word).
ROLES = frozenset(
    "dr doctor physician surgeon pcp provider nurse attending resident fellow intern "
    "hospitalist consultant therapist pharmacist paramedic paramedics emt emts interpreter "
    "aide sitter chaplain manager worker officer guard student roommate neighbor neighbour "
    "coworker employer landlord friend partner spouse caregiver assailant np pa staff "
    "practitioner specialist dentist midwife doula technician tech counselor counsellor".split()
)

PREPOSITIONS = frozenset("by with from to of at for near against behind".split())
REPORTING = frozenset(
    "says said states stated reports reported notes noted thinks thought believes believed "
    "feels felt explains explained agrees agreed mentions mentioned adds added writes wrote "
    "documents documented recalls recalled confirms confirmed indicates indicated suspects "
    "worries worried say report state note think believe feel explain agree asks asked "
    "requests requested notified informed".split()
)
# Words between a subject pronoun and its main verb that say nothing about the referent.
AUXILIARY = frozenset(
    "will would could can may might should must shall also still never not just already now "
    "then again only really reportedly apparently initially subsequently later".split()
)
BE = frozenset("is was were be been being 's am are".split())
HAVE = frozenset("has had have having".split())
# Main verbs that say what the patient is, has or undergoes.
PATIENT_VERBS = frozenset(
    "need needs needed lack lacks lacked tolerate tolerates tolerated deny denies denied "
    "fall falls fell collapse collapses collapsed present presents presented develop develops "
    "developed undergo undergoes underwent miss misses missed understand understands "
    "understood refuse refuses refused vomit vomits vomited vomiting sleep sleeps slept "
    "eat eats ate eaten complain complains complained endorse endorses endorsed sign signs signed "
    "choose chooses chose consent consents consented decline declines declined stop stops "
    "stopped pull pulls pulled hit hits "
    "lose loses lost gain gains gained suffer suffers suffered sustain sustains sustained "
    "experience experiences experienced appear appears appeared seem seems seemed".split()
)
# Main verbs of acts of care, done to the patient or for their care, never by a patient in a
# note ("he ordered a CT", "she drained the abscess", "he will examine him"): words a patient also
# does ("gave a history", "injects", "transferred to the chair", "plans to") are left out.
CARE_VERBS = frozenset(
    "order orders ordered prescribe prescribes prescribed administer administers administered "
    "perform performs performed place places placed insert inserts inserted remove removes "
    "removed drain drains drained biopsy biopsies biopsied examine examines examined review "
    "reviews reviewed recommend recommends recommended suggest suggests suggested intubate "
    "intubates intubated scope scopes scoped repair repairs repaired suture sutures sutured "
    "diagnose diagnoses diagnosed discharge discharges discharged adjust adjusts adjusted "
    "increase increases increased decrease decreases decreased titrate titrates titrated "
    "counsel counsels counseled counselled treat treats treated clip clips clipped page pages "
    "paged refer refers referred operate operates operated".split()
)
# After "is/was": states of a patient, never of a clinician in a note ("was hypotensive").
PATIENT_STATES = frozenset(
    "febrile afebrile hypotensive hypertensive tachycardic bradycardic hypoxic hypoxemic "
    "tachypneic diaphoretic septic lethargic somnolent obtunded unresponsive confused agitated "
    "combative drowsy tearful nauseated nauseous jaundiced icteric pale dizzy bleeding vomiting "
    "pregnant incontinent bedbound hypoglycemic hyperglycemic dehydrated intoxicated "
    "unconscious disoriented delirious".split()
)
# Words between "was" and a state that say nothing about the referent ("was more drowsy").
DEGREE = frozenset("more less very still now slightly mildly increasingly acutely".split())
FEEL = frozenset("feel feels felt feeling".split())
# After "is/was": a part a third party plays, not a state of the patient.
PARTS = frozenset(
    "hcp proxy contact guardian caregiver poa surrogate representative decision".split()
)
DETERMINERS = frozenset("the a an his her their this that these those".split())
OPINIONS = frozenset("opinion view judgment judgement assessment impression".split())
