"""Players' API under /web/api/red-blue-challenges: public reads, join, submit, self-test."""

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import leaderboard_limit, object_or_404, paginated_response
from core.async_api import AsyncApiView
from core.errors import ApplicationError, NotFoundError
from core.threads import run_orm
from judging.category_judge import effective_suite
from players.selectors import end_user_of_account
from players.services import end_user_for_account
from redblue.models import RedBlueChallenge, TeamSubmission
from redblue.teams.evaluation import TargetError, pairing_evaluate_async
from redblue.teams.selectors import (
    pairings_of_player,
    pairings_of_submission,
    pairings_published,
    red_blue_challenge_published,
    red_blue_challenges_public,
    standings_for_challenge,
    submission_of_player,
    team_of_player,
)
from redblue.teams.serializers import (
    JoinInputSerializer,
    JoinOutputSerializer,
    PairingSerializer,
    PlayerPairingSerializer,
    PublicRedBlueChallengeSerializer,
    SelfTestInputSerializer,
    SelfTestOutputSerializer,
    SubmissionStatusSerializer,
    SubmitInputSerializer,
    SubmitOutputSerializer,
)
from redblue.teams.services.submissions import self_test_prepare, submission_create, team_join

PLAYER_PAIRINGS_LIMIT = 50


def visible_challenge(challenge_id) -> RedBlueChallenge:
    return object_or_404(red_blue_challenges_public(), challenge_id)


class StandingsSerializer(serializers.Serializer):
    type = serializers.CharField()
    red_blue_challenge_id = serializers.UUIDField()
    scoring_strategy = serializers.CharField()
    pairings_completed = serializers.IntegerField()
    red = serializers.DictField()
    blue = serializers.DictField()


class RedBlueChallengeListApi(APIView):
    @extend_schema(
        operation_id="web_red_blue_challenges_list",
        responses=PublicRedBlueChallengeSerializer(many=True),
    )
    def get(self, request):
        return paginated_response(
            request, self, red_blue_challenges_public(), PublicRedBlueChallengeSerializer
        )


class RedBlueChallengeDetailApi(APIView):
    @extend_schema(
        operation_id="web_red_blue_challenge_retrieve", responses=PublicRedBlueChallengeSerializer
    )
    def get(self, request, challenge_id):
        challenge = visible_challenge(challenge_id)
        end_user = end_user_of_account(workspace_id=challenge.workspace_id, account=request.user)
        body = PublicRedBlueChallengeSerializer(challenge).data
        body["leaderboard"] = standings_for_challenge(
            challenge=challenge, limit=settings.LEADERBOARD_DEFAULT_LIMIT
        )
        body["my_team"] = team_of_player(challenge=challenge, end_user=end_user)
        return Response(body)


class RedBlueLeaderboardApi(APIView):
    @extend_schema(
        operation_id="web_red_blue_challenge_leaderboard",
        parameters=[OpenApiParameter("limit", int, description="1–100, default 10")],
        responses=StandingsSerializer,
    )
    def get(self, request, challenge_id):
        limit = leaderboard_limit(request)
        challenge = visible_challenge(challenge_id)
        return Response(standings_for_challenge(challenge=challenge, limit=limit))


class RedBlueJoinApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="web_red_blue_challenge_join",
        request=JoinInputSerializer,
        responses=JoinOutputSerializer,
    )
    def post(self, request, challenge_id):
        challenge = visible_challenge(challenge_id)
        data = JoinInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        end_user = end_user_for_account(workspace=challenge.workspace, account=request.user)
        membership = team_join(
            challenge=challenge, end_user=end_user, team=data.validated_data["team"]
        )
        return Response(
            {
                "red_blue_challenge_id": str(challenge.id),
                "team": membership.team,
                "end_user_id": str(end_user.id),
                "joined_at": membership.joined_at,
            }
        )


class RedBlueSubmitApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="web_red_blue_challenge_submit",
        request=SubmitInputSerializer,
        responses={201: SubmitOutputSerializer},
    )
    def post(self, request, challenge_id):
        challenge = visible_challenge(challenge_id)
        data = SubmitInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        end_user = end_user_for_account(workspace=challenge.workspace, account=request.user)
        by_session = isinstance(request.successful_authenticator, SessionAuthentication)
        source = TeamSubmission.Source.WEB if by_session else TeamSubmission.Source.API
        result = submission_create(
            challenge=challenge,
            end_user=end_user,
            team=data.validated_data["team"],
            prompt=data.validated_data.get("prompt"),
            source=source,
            slots=data.validated_data.get("slots"),
            defences=data.validated_data.get("defences"),
        )
        # Read back after commit: with eager tasks (the embedded default) they are done,
        # and a defence checked against the regression set is settled.
        submission = submission_of_player(
            challenge=challenge, end_user=end_user, submission_id=result.submission.id
        )
        pairings = pairings_of_submission(submission=submission)
        return Response(
            {
                "submission_id": str(submission.id),
                "team": submission.team,
                "status": submission.status,
                "waiting": submission.status == TeamSubmission.Status.WAITING,
                "fell_back": result.fell_back,
                "regression": submission.regression_report,
                "benign": submission.benign_report,
                "pairings": PlayerPairingSerializer(
                    pairings, many=True, context={"end_user_id": end_user.id}
                ).data,
            },
            status=status.HTTP_201_CREATED,
        )


class RedBlueSubmissionApi(APIView):
    """One of the caller's own submissions: where it stands (a defence being checked
    against the regression set, rejected with the attacks that still break it, paired)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="web_red_blue_challenge_submission",
        responses=SubmissionStatusSerializer,
    )
    def get(self, request, challenge_id, submission_id):
        challenge = visible_challenge(challenge_id)
        end_user = end_user_of_account(workspace_id=challenge.workspace_id, account=request.user)
        submission = submission_of_player(
            challenge=challenge, end_user=end_user, submission_id=submission_id
        )
        if submission is None:
            raise NotFoundError()
        return Response(
            {
                "submission_id": str(submission.id),
                "team": submission.team,
                "status": submission.status,
                "active": submission.active,
                "regression": submission.regression_report,
                "benign": submission.benign_report,
                "pairings": PlayerPairingSerializer(
                    pairings_of_submission(submission=submission),
                    many=True,
                    context={"end_user_id": end_user.id},
                ).data,
            }
        )


class RedBluePlayerPairingsApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="web_red_blue_challenge_my_pairings",
        responses=PlayerPairingSerializer(many=True),
    )
    def get(self, request, challenge_id):
        challenge = visible_challenge(challenge_id)
        end_user = end_user_of_account(workspace_id=challenge.workspace_id, account=request.user)
        pairings = (
            pairings_of_player(challenge=challenge, end_user=end_user, limit=PLAYER_PAIRINGS_LIMIT)
            if end_user
            else []
        )
        return Response(
            {
                "team": team_of_player(challenge=challenge, end_user=end_user),
                "results": PlayerPairingSerializer(
                    pairings, many=True, context={"end_user_id": end_user and end_user.id}
                ).data,
            }
        )


class RedBlueTranscriptsApi(APIView):
    """Every judged pairing whole, once the creator has published an ended challenge."""

    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="web_red_blue_challenge_transcripts",
        responses=PairingSerializer(many=True),
    )
    def get(self, request, challenge_id):
        challenge = red_blue_challenge_published(challenge_id=challenge_id)
        if challenge is None:
            raise NotFoundError()
        return paginated_response(
            request, self, pairings_published(challenge=challenge), PairingSerializer
        )


class RedBlueSelfTestApi(AsyncApiView):
    """Fire an attack at a defence without scoring it: shown to the player only."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        operation_id="web_red_blue_challenge_self_test",
        request=SelfTestInputSerializer,
        responses=SelfTestOutputSerializer,
    )
    async def post(self, request, challenge_id):
        def prepare():
            challenge = visible_challenge(challenge_id)
            data = SelfTestInputSerializer(data=request.data)
            data.is_valid(raise_exception=True)
            end_user = end_user_for_account(workspace=challenge.workspace, account=request.user)
            test = self_test_prepare(
                challenge=challenge,
                end_user=end_user,
                prompt=data.validated_data["prompt"],
                defense=data.validated_data.get("defense", ""),
            )
            return challenge, end_user, test

        challenge, end_user, test = await run_orm(prepare)
        try:
            outcome = await pairing_evaluate_async(
                challenge=challenge,
                attack=test.attack,
                defense=test.defense,
                user=str(end_user.id),
                scored=False,
            )
        except TargetError:
            raise ApplicationError(
                "The target model did not answer; please try again in a moment.",
                code="target_unavailable",
                status=502,
            ) from None
        labels = {
            item["code"]: item.get("label", "") for item in effective_suite(challenge.judge_suite)
        }
        return Response(
            {
                "against": test.against,
                "scored": False,
                "response": outcome.reply.text,
                "judge_passed": bool(outcome.verdict.breached),
                "judge_rating": outcome.verdict.rating,
                "judge_feedback": outcome.verdict.feedback,
                "categories": outcome.verdict.as_flags(),
                "category_results": outcome.judge_output_raw()["categories"],
                "labels": labels,
            }
        )
