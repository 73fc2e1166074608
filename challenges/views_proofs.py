"""The public page of a win's signed proof (SPEC §10), and the published keys."""

import json

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from challenges.proofs import proof_verify
from challenges.selectors.proofs import proof_public_keys
from challenges.services.proofs import proof_download, proof_for_id
from core.errors import NotFoundError


@require_GET
def proof_page(request: HttpRequest, proof_id: str) -> HttpResponse:
    """The proof, readable, checked here against the published keys; the page's script
    checks it again in the browser (WebCrypto Ed25519) from the API's copy."""
    try:
        proof = proof_for_id(proof_id=proof_id)
    except NotFoundError:
        raise Http404("No proof with that id.") from None
    download = proof_download(proof)
    context = {
        "proof_id": proof.pk,
        "document": download["proof"],
        "key_id": download["key_id"],
        "verification": proof_verify(download, proof_public_keys()),
        "raw": json.dumps(download, indent=2, ensure_ascii=False, sort_keys=True),
    }
    return render(request, "challenges/proof.html", context)
