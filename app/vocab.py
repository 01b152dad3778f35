"""The one vocabulary: every closed set of names the project uses, and their properties.

The domain, the request/response schemas, the catalog, the forms, the CLI and the benchmark
runner import these instead of re-declaring them. Adding a value (a precision, a runtime) is
one entry here plus its data and formulas; `tests/test_vocab.py` checks that every table
covers every value, so a half-added value fails the suite instead of a request.

Pure: no FastAPI, SQLAlchemy, torch or settings (the domain and the bench import it). Tables
are keyed by plain ``str`` so that code holding a validated string can look values up.
"""

from __future__ import annotations

from typing import Literal, get_args

# ---------------------------------------------------------------- precision

Precision = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"]
PRECISIONS: tuple[Precision, ...] = get_args(Precision)

#: Bytes per stored element before quantisation scales (the scales are the engine's business:
#: `app.domain.workload.BYTES`). TF32 is a compute mode: tensors stay fp32 in memory.
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}

PRECISION_LABELS: dict[str, str] = {
    "bf16": "BF16 mixed precision",
    "fp16": "FP16 mixed precision",
    "fp32": "FP32",
    "tf32": "TF32",
    "fp8": "FP8",
    "int8": "INT8 (quantised)",
    "int4": "INT4 (quantised)",
    "fp4": "FP4 (NVFP4/MXFP4)",
}

#: What a precision falls back to, in order, when the GPU or framework lacks it.
PRECISION_FALLBACK: dict[str, tuple[Precision, ...]] = {
    "fp32": (),
    "tf32": ("fp32",),
    "bf16": ("fp16", "fp32"),
    "fp16": ("fp32",),
    "fp8": ("bf16", "fp16", "fp32"),
    "int8": ("fp16", "fp32"),
    "int4": ("fp16", "fp32"),
    "fp4": ("fp8", "bf16", "fp16", "fp32"),
}

#: Precisions that quantise weights only: kernels dequantise to 16-bit for the math.
WEIGHT_ONLY_PRECISIONS: tuple[Precision, ...] = ("int8", "int4")

#: Precisions the catalog carries a dense peak figure for, and the GpuSpec/catalog field.
PEAK_FIELDS: dict[str, str] = {
    "fp32": "fp32_tflops",
    "tf32": "tf32_tflops",
    "fp16": "fp16_tflops",
    "bf16": "bf16_tflops",
    "fp8": "fp8_tflops",
    "int8": "int8_tops",
}
CatalogPrecision = Literal["fp32", "tf32", "fp16", "bf16", "fp8", "int8"]
CATALOG_PRECISIONS: tuple[CatalogPrecision, ...] = get_args(CatalogPrecision)

#: Floating-point matmul precisions with an efficiency prior, calibrated from device reports
#: and measured by the benchmark runner (in the runner's order).
MeasuredPrecision = Literal["fp32", "tf32", "fp16", "bf16", "fp8"]
MEASURED_PRECISIONS: tuple[MeasuredPrecision, ...] = get_args(MeasuredPrecision)

#: Precisions the engine models today. Others are accepted by the vocabulary and rejected by
#: the workload resolver with a 422 naming the field until their formulas land.
MODELLED_PRECISIONS: tuple[Precision, ...] = (
    "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4",
)  # fmt: skip

# ---------------------------------------------------------------- the job

Task = Literal["training", "fine-tuning", "inference", "serving"]
TASKS: tuple[Task, ...] = get_args(Task)
TASK_LABELS: dict[str, str] = {
    "training": "Training from scratch",
    "fine-tuning": "Fine-tuning",
    "inference": "Inference",
    "serving": "Serving (many users, a latency target)",
}
TRAINING_TASKS: tuple[Task, ...] = ("training", "fine-tuning")
#: Tasks the engine models today (see MODELLED_PRECISIONS).
MODELLED_TASKS: tuple[Task, ...] = ("training", "fine-tuning", "inference", "serving")

Family = Literal["decoder", "encoder", "encoder-decoder", "cnn", "vit", "diffusion", "mlp"]
FAMILIES: tuple[Family, ...] = get_args(Family)
FAMILY_LABELS: dict[str, str] = {
    "decoder": "Decoder LLM (GPT, Llama)",
    "encoder": "Encoder (BERT)",
    "encoder-decoder": "Encoder–decoder (T5, Whisper)",
    "vit": "Vision transformer",
    "cnn": "Convolutional network",
    "diffusion": "Diffusion (UNet)",
    "mlp": "MLP / other",
}
TRANSFORMER_FAMILIES: tuple[Family, ...] = ("decoder", "encoder", "encoder-decoder")

Optimizer = Literal["adamw", "adam8bit", "sgd"]
OPTIMIZERS: tuple[Optimizer, ...] = get_args(Optimizer)
OPTIMIZER_LABELS: dict[str, str] = {
    "adamw": "AdamW",
    "adam8bit": "8-bit Adam",
    "sgd": "SGD with momentum",
}

Peft = Literal["none", "lora", "qlora"]
PEFTS: tuple[Peft, ...] = get_args(Peft)
PEFT_LABELS: dict[str, str] = {
    "none": "None (all weights trained)",
    "lora": "LoRA",
    "qlora": "QLoRA (4-bit base)",
}

#: How the model is run. Efficiencies and overheads are keyed by runtime (owned by `serving`).
Runtime = Literal[
    "pytorch",
    "torch-compile",
    "tensorrt",
    "onnxruntime",
    "tensorflow",
    "tensorflow-xla",
    "jax",
    "transformers",
    "vllm",
    "sglang",
    "tensorrt-llm",
    "llama.cpp",
    "mlx",
]
RUNTIMES: tuple[Runtime, ...] = get_args(Runtime)
RUNTIME_LABELS: dict[str, str] = {
    "pytorch": "PyTorch (eager)",
    "torch-compile": "PyTorch compiled (torch.compile / CUDA graphs)",
    "tensorrt": "TensorRT",
    "onnxruntime": "ONNX Runtime",
    "tensorflow": "TensorFlow",
    "tensorflow-xla": "TensorFlow with XLA",
    "jax": "JAX",
    "transformers": "Hugging Face Transformers (eager generate)",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "tensorrt-llm": "TensorRT-LLM",
    "llama.cpp": "llama.cpp",
    "mlx": "MLX",
}

#: The weight format of a quantised model (bits per weight live in data, owned by `accuracy`).
Quantization = Literal[
    "none", "gptq", "awq", "nf4", "q4_0", "q4_k_m", "q8_0", "mxfp4", "nvfp4"
]  # fmt: skip
QUANTIZATIONS: tuple[Quantization, ...] = get_args(Quantization)
QUANTIZATION_LABELS: dict[str, str] = {
    "none": "None",
    "gptq": "GPTQ",
    "awq": "AWQ",
    "nf4": "NF4 (bitsandbytes)",
    "q4_0": "GGUF Q4_0",
    "q4_k_m": "GGUF Q4_K_M",
    "q8_0": "GGUF Q8_0",
    "mxfp4": "MXFP4",
    "nvfp4": "NVFP4",
}

KvCachePrecision = Literal["bf16", "fp16", "fp8"]
KV_CACHE_PRECISIONS: tuple[KvCachePrecision, ...] = get_args(KvCachePrecision)

# ---------------------------------------------------------------- the question

Framework = Literal["pytorch", "tensorflow", "jax"]
FRAMEWORKS: tuple[Framework, ...] = get_args(Framework)
FRAMEWORK_LABELS: dict[str, str] = {
    "pytorch": "PyTorch",
    "tensorflow": "TensorFlow",
    "jax": "JAX",
}

Acquisition = Literal["buy", "rent", "either"]
ACQUISITIONS: tuple[Acquisition, ...] = get_args(Acquisition)
ACQUISITION_LABELS: dict[str, str] = {
    "either": "Buy or rent",
    "buy": "Buy",
    "rent": "Rent (cloud)",
}

Objective = Literal["fastest", "best_value", "cheapest", "balanced"]
OBJECTIVES: tuple[Objective, ...] = get_args(Objective)
PURCHASE_BASIS_LABELS: dict[str, str] = {
    "auto": "New, else used, else launch",
    "new": "New price",
    "used": "Used / market price",
    "launch": "Launch price (MSRP)",
}

OBJECTIVE_LABELS: dict[str, str] = {
    "balanced": "Balanced",
    "fastest": "Fastest",
    "best_value": "Best value (throughput per dollar)",
    "cheapest": "Cheapest to finish",
}

# ---------------------------------------------------------------- hardware

Vendor = Literal["nvidia", "amd", "intel", "apple"]
VENDORS: tuple[Vendor, ...] = get_args(Vendor)
VENDOR_LABELS: dict[str, str] = {
    "nvidia": "NVIDIA",
    "amd": "AMD",
    "intel": "Intel",
    "apple": "Apple",
}

Segment = Literal["datacenter", "workstation", "consumer", "laptop", "soc"]
SEGMENTS: tuple[Segment, ...] = get_args(Segment)
SEGMENT_LABELS: dict[str, str] = {
    "datacenter": "Datacenter",
    "workstation": "Workstation",
    "consumer": "Consumer",
    "laptop": "Laptop",
    "soc": "SoC / unified memory",
}

#: Software backends a GPU entry in the catalog may list.
Backend = Literal["cuda", "rocm", "mps", "xpu", "hpu", "directml", "vulkan", "metal", "cpu"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)
#: Backends PyTorch can run the benchmark runner on (what a device report names).
DeviceBackend = Literal["cuda", "rocm", "mps", "xpu", "cpu"]
DEVICE_BACKENDS: tuple[DeviceBackend, ...] = get_args(DeviceBackend)
BACKEND_LABELS: dict[str, str] = {
    "cuda": "CUDA",
    "rocm": "ROCm",
    "mps": "Metal Performance Shaders",
    "xpu": "Intel XPU (oneAPI)",
    "hpu": "Intel Gaudi (HPU)",
    "directml": "DirectML",
    "vulkan": "Vulkan",
    "metal": "Metal",
    "cpu": "CPU",
}


def labelled(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """(value, label) pairs in the table's order, for select boxes and help texts."""
    return tuple(labels.items())


def choices(values: tuple[str, ...]) -> str:
    """'a | b | c' for help texts."""
    return " | ".join(values)
