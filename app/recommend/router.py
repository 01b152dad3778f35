"""JSON API: workload presets, recommendations and single-GPU estimates."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import TypeAdapter

from app.deps import SessionDep, SettingsDep, request_session
from app.recommend import orchestrate
from app.recommend import schemas as s

router = APIRouter(prefix="/api/v1", tags=["recommendations"])


@router.get("/workloads", response_model=s.WorkloadList, summary="Workload presets")
def list_workloads(settings: SettingsDep) -> s.WorkloadList:
    return orchestrate.list_workloads(settings)


@router.get("/workloads/{workload_id}", response_model=s.WorkloadPresetOut)
def get_workload(settings: SettingsDep, workload_id: str) -> s.WorkloadPresetOut:
    return orchestrate.get_workload(settings, workload_id)


# The answer as FastAPI writes a response_model's JSON (the model's own serializer, by alias).
_ANSWER = TypeAdapter(s.RecommendationResponse)


@router.post(
    "/recommendations",
    response_model=s.RecommendationResponse,
    summary="Rank the catalog for a workload, with explanations",
)
def recommend(request: Request, body: s.RecommendationRequest) -> Response:
    # The session is opened, and the answer written out, here in the endpoint's thread: as a
    # dependency and a returned model they are three more trips to the threadpool. The
    # answer is the service's own model, so FastAPI's check of it against the response_model
    # (declared for the schema) would pass it as it is.
    with request_session(request) as session:
        answer = orchestrate.recommend_for(session, request.app.state.settings, body)
    return Response(_ANSWER.dump_json(answer, by_alias=True), media_type="application/json")


@router.post("/estimate", response_model=s.EstimateResponse, summary="One workload on one GPU")
def estimate(
    session: SessionDep, settings: SettingsDep, body: s.EstimateRequest
) -> s.EstimateResponse:
    return orchestrate.estimate_for(session, settings, body)
