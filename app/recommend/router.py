"""JSON API: workload presets, recommendations and single-GPU estimates."""

from __future__ import annotations

from fastapi import APIRouter

from app.deps import SessionDep, SettingsDep
from app.recommend import orchestrate
from app.recommend import schemas as s

router = APIRouter(prefix="/api/v1", tags=["recommendations"])


@router.get("/workloads", response_model=s.WorkloadList, summary="Workload presets")
def list_workloads(settings: SettingsDep) -> s.WorkloadList:
    return orchestrate.list_workloads(settings)


@router.get("/workloads/{workload_id}", response_model=s.WorkloadPresetOut)
def get_workload(settings: SettingsDep, workload_id: str) -> s.WorkloadPresetOut:
    return orchestrate.get_workload(settings, workload_id)


@router.post(
    "/recommendations",
    response_model=s.RecommendationResponse,
    summary="Rank the catalog for a workload, with explanations",
)
def recommend(
    session: SessionDep, settings: SettingsDep, body: s.RecommendationRequest
) -> s.RecommendationResponse:
    return orchestrate.recommend_for(session, settings, body)


@router.post("/estimate", response_model=s.EstimateResponse, summary="One workload on one GPU")
def estimate(
    session: SessionDep, settings: SettingsDep, body: s.EstimateRequest
) -> s.EstimateResponse:
    return orchestrate.estimate_for(session, settings, body)
