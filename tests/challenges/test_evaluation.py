import pytest

from challenges.models import Secret
from tests.evaluate import evaluate as challenge_evaluate
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db


def _passes(workspace, output, **fields):
    return challenge_evaluate(
        challenge=make_challenge(workspace=workspace, **fields), output=output
    )


@pytest.mark.parametrize(
    "pattern,output,expected",
    [
        ("open sesame", "OK: OPEN SESAME!", True),
        ("Straße", "the STRASSE is here", True),  # casefold
        ("ｆｌａｇ", "here is the flag", True),  # NFKC: full-width letters
        ("ﬁre", "FIRE", True),  # NFKC: ligature
        ("café", "CAFE\u0301", True),  # combining accent composes under NFKC
        ("密码", "这是密码", True),
        ("open sesame", "open\nsesame", False),
        ("open sesame", "", False),
        ("open sesame", "open sesam", False),
    ],
)
def test_contains(workspace, pattern, output, expected):
    assert _passes(workspace, output, success_pattern=pattern).passed is expected


@pytest.mark.parametrize(
    "pattern,output,expected",
    [
        (r"^FLAG-\d{3}$", "blah\nFLAG-123\nblah", True),  # multiline anchors
        (r"^FLAG-\d{3}$", "blah FLAG-123 blah", False),
        (r"flag", "FLAG", False),  # regex is case sensitive...
        (r"(?i)flag", "FLAG", True),  # ...unless asked
        (r"\p{Han}{2}", "密码", True),
        (r"a.b", "a\nb", False),
        (r"(?s)a.b", "a\nb", True),
        (r"^$", "", True),
        (r"x", "", False),
    ],
)
def test_regex(workspace, pattern, output, expected):
    result = _passes(workspace, output, success_type="regex", success_pattern=pattern)
    assert result.passed is expected


def test_a_catastrophic_pattern_answers(workspace):
    verdict = _passes(workspace, "a" * 50_000 + "!", success_type="regex", success_pattern="(a+)+$")
    assert verdict.passed is False


def test_the_secret_is_filled_in_server_side(workspace):
    Secret.objects.create(workspace=workspace, name="pw", value="Sw0rd.fish+")
    common = {"secret_ref": "pw"}
    assert _passes(workspace, "it is sw0rd.fish+", success_pattern="{{ secret }}", **common).passed
    # In a regex the secret is literal text, not a pattern.
    regex = {"success_type": "regex", "success_pattern": r"^pw: {{secret}}$", **common}
    assert _passes(workspace, "pw: Sw0rd.fish+", **regex).passed
    assert not _passes(workspace, "pw: Sw0rdXfishhh", **regex).passed
