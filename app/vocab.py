"""The one vocabulary: every closed set of names the project uses, and their properties.

The domain, the request/response schemas, the catalog, the forms, the CLI and the benchmark
runner import these instead of re-declaring them. Adding a value (a precision, a runtime) is
one entry here plus its data and formulas; `tests/test_vocab.py` checks that every table
covers every value, so a half-added value fails the suite instead of a request.

Pure: no FastAPI, SQLAlchemy, torch or settings (the domain and the bench import it). Tables
are keyed by plain ``str`` so that code holding a validated string can look values up.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, get_args

# ---------------------------------------------------------------- precision

Precision = Literal["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"]
PRECISIONS: tuple[Precision, ...] = get_args(Precision)


class PrecisionRow(NamedTuple):
    """Everything the project knows about one precision, in one row."""

    label: str
    #: Bytes per stored element before quantisation scales (the scales are the engine's
    #: business: `app.domain.workload.BYTES`). TF32 is a compute mode: tensors stay fp32.
    bytes: float
    #: Bytes per KV-cache element when a one-job inference runs at this precision: quantised
    #: weights (fp8, int8, int4, fp4) keep their activations and KV cache in 16-bit. Task
    #: 'serving' sets its KV precision itself (KvCachePrecision).
    kv_bytes: float
    #: What it falls back to, in order, when the GPU or framework lacks it.
    fallback: tuple[Precision, ...]
    #: Datapath: the catalog's dense peak figure its matmuls run at natively (the GpuSpec and
    #: catalog field); None where no GPU publishes one.
    peak_field: str | None
    #: Datapath: weights quantised only; kernels dequantise to 16-bit for the math.
    weight_only: bool
    #: The engine models it today. Others are accepted by the vocabulary and rejected by the
    #: workload resolver with a 422 naming the field until their formulas land.
    modelled: bool


#: One row per precision, in the order forms offer them (every table below is read off it).
PRECISION_TABLE: dict[Precision, PrecisionRow] = {
    "bf16": PrecisionRow(
        "BF16 mixed precision", 2.0, 2.0, ("fp16", "fp32"), "bf16_tflops", False, True
    ),
    "fp16": PrecisionRow("FP16 mixed precision", 2.0, 2.0, ("fp32",), "fp16_tflops", False, True),
    "fp32": PrecisionRow("FP32", 4.0, 4.0, (), "fp32_tflops", False, True),
    "tf32": PrecisionRow("TF32", 4.0, 4.0, ("fp32",), "tf32_tflops", False, True),
    "fp8": PrecisionRow("FP8", 1.0, 2.0, ("bf16", "fp16", "fp32"), "fp8_tflops", False, True),
    "int8": PrecisionRow("INT8 (quantised)", 1.0, 2.0, ("fp16", "fp32"), "int8_tops", True, True),
    "int4": PrecisionRow("INT4 (quantised)", 0.5, 2.0, ("fp16", "fp32"), None, True, True),
    # an FP4 checkpoint a GPU cannot run as FP4 (natively or weight-only) is dequantised to
    # 16-bit at load (Transformers' MXFP4 loader): no runtime re-quantises it to fp8
    "fp4": PrecisionRow(
        "FP4 (NVFP4/MXFP4)", 0.5, 2.0, ("bf16", "fp16", "fp32"), None, False, False
    ),
}

BYTES_PER_ELEMENT: dict[str, float] = {p: PRECISION_TABLE[p].bytes for p in PRECISIONS}
KV_BYTES_PER_ELEMENT: dict[str, float] = {p: PRECISION_TABLE[p].kv_bytes for p in PRECISIONS}
PRECISION_LABELS: dict[str, str] = {p: row.label for p, row in PRECISION_TABLE.items()}
PRECISION_FALLBACK: dict[str, tuple[Precision, ...]] = {
    p: PRECISION_TABLE[p].fallback for p in PRECISIONS
}
WEIGHT_ONLY_PRECISIONS: tuple[Precision, ...] = tuple(
    p for p in PRECISIONS if PRECISION_TABLE[p].weight_only
)
MODELLED_PRECISIONS: tuple[Precision, ...] = tuple(
    p for p in PRECISIONS if PRECISION_TABLE[p].modelled
)

#: Precisions the catalog carries a dense peak figure for (a Literal for the API's enum; a
#: test holds it to the rows with a peak_field), and the GpuSpec/catalog field of each.
CatalogPrecision = Literal["fp32", "tf32", "fp16", "bf16", "fp8", "int8"]
CATALOG_PRECISIONS: tuple[CatalogPrecision, ...] = get_args(CatalogPrecision)
PEAK_FIELDS: dict[str, str] = {
    p: field for p in CATALOG_PRECISIONS if (field := PRECISION_TABLE[p].peak_field) is not None
}

#: Floating-point matmul precisions with an efficiency prior, calibrated from device reports
#: and measured by the benchmark runner (in the runner's order).
MeasuredPrecision = Literal["fp32", "tf32", "fp16", "bf16", "fp8"]
MEASURED_PRECISIONS: tuple[MeasuredPrecision, ...] = get_args(MeasuredPrecision)
#: Tensor-core datapaths a sustained (power-limited) GEMM rate may be given for
#: (data/efficiency.yaml sustained_gemm_tflops; fp32 runs on the CUDA cores).
SUSTAINED_GEMM_PRECISIONS: tuple[MeasuredPrecision, ...] = ("bf16", "fp16", "tf32", "fp8")
#: The 16-bit float formats: a KV cache in either is a runtime's default, not a quantised one.
HALF_PRECISIONS: tuple[Precision, ...] = ("bf16", "fp16")
#: Integer formats perf.dequantised runs as 16-bit math on a copy of the weights.
DEQUANTISED_PRECISIONS: tuple[Precision, ...] = ("int8", "int4")


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
INFERENCE_TASKS: tuple[Task, ...] = ("inference", "serving")
#: Tasks that describe one job (batch, steps, samples); 'serving' describes a load instead.
ONE_JOB_TASKS: tuple[Task, ...] = ("training", "fine-tuning", "inference")

Family = Literal["decoder", "encoder", "encoder-decoder", "cnn", "vit", "diffusion", "mlp"]
FAMILIES: tuple[Family, ...] = get_args(Family)
FAMILY_LABELS: dict[str, str] = {
    "decoder": "Decoder LLM (GPT, Llama)",
    "encoder": "Encoder (BERT)",
    "encoder-decoder": "Encoder–decoder (T5, Whisper)",
    "vit": "Vision transformer",
    "cnn": "Convolutional network",
    "diffusion": "Diffusion (UNet or DiT)",
    "mlp": "MLP / other",
}
TRANSFORMER_FAMILIES: tuple[Family, ...] = ("decoder", "encoder", "encoder-decoder")
#: Families whose int8/int4 inference, on a runtime with no kernels of its own for them, only
#: shrinks the stored weights (perf.dequantised: torchao's weight-only linear dequantises).
DEQUANTISED_FAMILIES: tuple[Family, ...] = ("vit", "cnn", "encoder", "diffusion", "mlp")
#: Families whose compute may be convolutions: a CNN's always; a diffusion model's where its
#: denoiser is a UNet (SD 1.5, SDXL), not where it is a transformer of Linear layers (FLUX.1's
#: rectified-flow DiT, whose VAE convolutions stay 16-bit): ModelSpec.conv_layers reads which
#: from the preset's operator table (data/operators/).
CONV_FAMILIES: tuple[Family, ...] = ("cnn", "diffusion")
#: Families whose 16-bit inference is priced as autocast over fp32 weights on an
#: AUTOCAST_RUNTIMES runtime (a cast kernel per conv / linear weight each pass,
#: perf._autocast_casts); every other inference runs on 16-bit weights throughout.
AUTOCAST_FAMILIES: tuple[Family, ...] = ("cnn", "vit")
#: Families whose sample is an image (a diffusion sample: one generated image): their rates
#: are shown in images/s.
IMAGE_FAMILIES: tuple[Family, ...] = ("cnn", "diffusion", "vit")
#: Language models whose training throughput is shown in tokens/s (their data budgets are
#: counted in tokens).
TOKEN_COUNTED_FAMILIES: tuple[Family, ...] = ("decoder", "encoder-decoder")
#: Families whose inference generates tokens, so reads workload.output_tokens; the others
#: return their output (an embedding, a class, an image) from their forward passes.
GENERATING_FAMILIES: tuple[Family, ...] = ("decoder", "encoder-decoder")

Optimizer = Literal["adamw", "adam8bit", "sgd"]
OPTIMIZERS: tuple[Optimizer, ...] = get_args(Optimizer)
OPTIMIZER_LABELS: dict[str, str] = {
    "adamw": "AdamW",
    "adam8bit": "8-bit Adam",
    "sgd": "SGD with momentum",
}

#: Whether a 16-bit training job keeps an fp32 master copy of its weights: "fp32" (torch.autocast
#: and apex AMP: fp32 parameters, gradients and AdamW states, 16 bytes a parameter before
#: activations) or "none" (pure 16-bit: the model itself is bf16/fp16 and so are its gradients
#: and a torch optimizer's states, as torchtune trains with dtype bf16: "all activations,
#: gradients and optimizer states are in bfloat16", recipes/full_finetune_single_device.py).
MasterWeights = Literal["fp32", "none"]
MASTER_WEIGHTS: tuple[MasterWeights, ...] = get_args(MasterWeights)
MASTER_WEIGHTS_LABELS: dict[str, str] = {
    "fp32": "fp32 master copy (mixed precision)",
    "none": "None (pure 16-bit weights)",
}

Peft = Literal["none", "lora", "qlora"]
PEFTS: tuple[Peft, ...] = get_args(Peft)
PEFT_LABELS: dict[str, str] = {
    "none": "None (all weights trained)",
    "lora": "LoRA",
    "qlora": "QLoRA (4-bit base)",
}

#: Task 'inference' on more GPUs than one replica of the model needs: one replica spread over
#: all of them (the runtime's span: tensor parallel or a layer split; the latency of one
#: stream), or, for a batch of independent work, copies side by side, each on its share of
#: the samples (nothing crosses between them), where they get through the batch faster than
#: one replica (evaluate.copies_of).
ExtraGpus = Literal["one_replica", "copies"]
EXTRA_GPUS: tuple[ExtraGpus, ...] = get_args(ExtraGpus)
EXTRA_GPUS_LABELS: dict[str, str] = {
    "one_replica": "One replica (one stream)",
    "copies": "Copies where faster (batch work)",
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
    # llama.cpp's Vulkan build (docs/build.md, "Vulkan"): the request's runtime is llama.cpp
    # on the Vulkan backend (WorkloadIn folds it into runtime llama.cpp + gpu_backend vulkan)
    "llama.cpp-vulkan",
    "mlx",
    "megatron",
]
RUNTIMES: tuple[Runtime, ...] = get_args(Runtime)
RUNTIME_LABELS: dict[str, str] = {
    "pytorch": "PyTorch (eager)",
    # priced as it runs with no mode set (Inductor's kernels launched from Python), an LLM's
    # decode and prefill as gpt-fast's mode="reduce-overhead" (data/efficiency.yaml's rows)
    "torch-compile": "PyTorch compiled (torch.compile default mode; LLM inference: CUDA graphs)",
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
    "llama.cpp-vulkan": "llama.cpp (Vulkan build)",
    "mlx": "MLX",
    "megatron": "Megatron-LM / NeMo (TE)",
}
#: A runtime's name inside a sentence ("vLLM on ROCm is experimental", "Assumes torch.compile
#: on CUDA."): the label without the form's account of what is priced, which the answer's
#: echo gives; a warning had read "vllm on … (rocm) is experimental", the request's ids.
#: The encoder servers are named as the question form names them (app/web/labels.py).
RUNTIME_NAMES: dict[str, str] = {
    **RUNTIME_LABELS,
    "torch-compile": "torch.compile",
    "tei": "TEI",
    "infinity": "infinity",
    "sentence-transformers": "sentence-transformers",
    "vllm-pooling": "vLLM's pooling runner",
}
#: The runtime a request names for llama.cpp's Vulkan build, and the backend it stands for:
#: the engine prices it as runtime "llama.cpp" on backend "vulkan" (WorkloadSpec.gpu_backend).
LLAMACPP_VULKAN_RUNTIME = "llama.cpp-vulkan"
#: GPU backends a request may pin llama.cpp to (its Vulkan build); None: the GPU's own
#: (CUDA, HIP, Metal, SYCL) as framework support picks it.
GpuBackend = Literal["vulkan"]
GPU_BACKENDS: tuple[GpuBackend, ...] = get_args(GpuBackend)
#: Runtimes a training or fine-tuning job runs on; the others are inference runtimes.
TRAINING_RUNTIMES: tuple[Runtime, ...] = (
    "pytorch", "torch-compile", "tensorflow", "tensorflow-xla", "jax", "megatron", "mlx",
)  # fmt: skip
#: Runtimes priced for fine-tuning with adapters alone: mlx-lm's LoRA and QLoRA (mlx_lm.lora,
#: LORA.md) on decoder LLMs. Its other methods (--fine-tune-type full, which trains the last
#: --num-layers blocks whole, and DoRA) are not modelled, and it has no pretraining script.
ADAPTER_ONLY_RUNTIMES: tuple[Runtime, ...] = ("mlx",)
#: Runtimes that only train: Megatron-LM / NeMo / Megatron-Bridge on Transformer Engine is
#: priced as a training stack (data/efficiency.yaml's megatron rows); its inference path
#: (Megatron-Core's static and dynamic engines) has no rows and is refused with a 422.
TRAINING_ONLY_RUNTIMES: tuple[Runtime, ...] = ("megatron",)
#: Runtimes that train transformers only (Megatron-Core builds GPT, BERT, T5 and ViT models, not
#: CNNs or UNets), and the families they take.
TRANSFORMER_ONLY_RUNTIMES: tuple[Runtime, ...] = ("megatron",)
TRANSFORMER_RUNTIME_FAMILIES: tuple[Family, ...] = ("decoder", "encoder", "encoder-decoder", "vit")
#: Runtimes built for language models: vLLM, SGLang, TensorRT-LLM and llama.cpp list decoder LLMs,
#: encoder-decoders (Whisper, T5) and BERT-style embedding models among their supported models,
#: and no CNN, ViT classifier, diffusion UNet or MLP (docs.vllm.ai/en/latest/models/
#: supported_models.html; docs.sglang.ai/supported_models; nvidia.github.io/TensorRT-LLM/reference/
#: support-matrix.html; github.com/ggml-org/llama.cpp README "Models"). The same families are the
#: only ones a quantised weight format (GPTQ, AWQ, NF4, GGUF, MXFP4, NVFP4) is modelled for: their
#: kernels replace the Linear layers of a transformer, and the quality costs named per format
#: (data/quality.yaml) were measured on language models.
LLM_RUNTIMES: tuple[Runtime, ...] = ("vllm", "sglang", "tensorrt-llm", "llama.cpp")
LANGUAGE_MODEL_FAMILIES: tuple[Family, ...] = ("decoder", "encoder", "encoder-decoder")
#: LLM runtimes that run no speech encoder-decoder (an encoder-decoder whose input is given in
#: audio seconds, ``model.input_size``: Whisper), with what to say instead. llama.cpp's
#: encoder-decoder support is T5's text models (ggml-org/llama.cpp PR #8141, llama_encode);
#: Whisper runs in whisper.cpp, ggml's separate program, which is not modelled. vLLM
#: (WhisperForConditionalGeneration) and TensorRT-LLM (examples/whisper) list Whisper.
SPEECH_REFUSED_RUNTIMES: dict[str, str] = {
    "llama.cpp": (
        "llama.cpp runs no Whisper model (its encoder-decoder support is T5's text models); "
        "Whisper runs in whisper.cpp, a separate ggml program this estimate does not model: "
        "use 'pytorch' (openai/whisper) or 'transformers' (Hugging Face generate)"
    ),
}
#: Servers that run several replicas on one node behind one endpoint themselves (vLLM's
#: --data-parallel-size, SGLang's --dp-size): app/recommend/deploy.py.
DATA_PARALLEL_SERVERS: tuple[Runtime, ...] = ("vllm", "sglang")
#: Servers that load a Hugging Face checkpoint by its repository id, an FP8 one included
#: (app/recommend/deploy.checkpoint); llama.cpp and MLX read files of their own
HF_CHECKPOINT_SERVERS: tuple[Runtime, ...] = ("vllm", "sglang", "tensorrt-llm")
#: Runtimes whose fused attention is PyTorch's own SDPA: the kernel generation a GPU gets there
#: is PyTorch's choice (perf._attention_kernel). Megatron's is Transformer Engine's own
#: (cuDNN fused attention or FlashAttention-2/3), not SDPA's.
SDPA_RUNTIMES: tuple[Runtime, ...] = ("pytorch", "transformers", "torch-compile")
#: Runtimes that are PyTorch programs a user runs on their own machine (Windows included):
#: ROCm PyTorch's Windows caveat and PyTorch's memory tools are theirs, not llama.cpp's, MLX's
#: or a Linux serving engine's.
TORCH_PROGRAM_RUNTIMES: tuple[Runtime, ...] = ("pytorch", "transformers", "torch-compile")
#: Runtimes whose CNNs run in NCHW: eager PyTorch keeps its default contiguous memory format
#: unless the user converts to channels_last, and DeepLearningExamples' ConvNets default to it
#: (--memory-format nchw; Lambda's fork keeps it; DLE's own AMP configs set nhwc, which a job
#: says with WorkloadSpec.channels_last). TensorFlow's published CNN harnesses compute in NCHW
#: on the GPU (DLE's TF ConvNets: hidden --data_format flag, default NCHW). TensorRT chooses
#: its own layouts.
#: ONNX Runtime's CUDA execution provider keeps NCHW too (OrtCUDAProviderOptionsV2.prefer_nhwc
#: = 0 by default). torch.compile is not here: Inductor's layout optimisation
#: (torch._inductor.config.layout_optimization, on by default on CUDA) runs a convolutional
#: graph's convolutions channels-last (GraphLowering.decide_layout_opt) — from PyTorch 2.1 for
#: CNNs, 2.2 for diffusion UNets; a job under an older stated release runs NCHW
#: (perf._inductor_keeps_nchw).
NCHW_RUNTIMES: tuple[Runtime, ...] = ("pytorch", "tensorflow", "tensorflow-xla", "onnxruntime")
#: Runtimes whose CNN training a shipped operator table prices, in every precision: eager
#: PyTorch (Lambda's and DLE's tables), TensorFlow graph mode (Lambda's tf_cnn_benchmarks
#: tables) and TensorFlow + XLA (DLE's tables).
CNN_TRAIN_TABLE_RUNTIMES: tuple[Runtime, ...] = ("pytorch", "tensorflow", "tensorflow-xla")
#: Runtimes that add a convolution's bias in an element-wise pass of its own (no epilogue
#: fusion): eager PyTorch and TensorFlow graph mode (operators.conv_bias_pass).
BIAS_PASS_RUNTIMES: tuple[Runtime, ...] = ("pytorch", "tensorflow")
#: Runtimes whose CNN inference a shipped operator table prices (perf.table_prices): the eager
#: ones with their host dispatch, and the compiling ones (TensorRT, torch.compile, ONNX Runtime)
#: as the same table under their fusion and launch policy (data/efficiency.yaml runtime rows).
CNN_TABLE_RUNTIMES: tuple[Runtime, ...] = (
    "tensorrt", "pytorch", "tensorflow", "tensorflow-xla", "torch-compile", "onnxruntime"
)  # fmt: skip
#: Runtimes whose diffusion inference a shipped operator table prices (perf.table_prices):
#: eager diffusers and the runtimes diffusion pipelines are compiled for (torch.compile of the
#: UNet, ONNX Runtime's and TensorRT's exported UNet / VAE), each under its own policy. The
#: compiled ones at 16 and 32 bits only (DIFFUSION_TABLE_PRECISIONS): their 8-bit UNets
#: (MLPerf's INT8 / FP8 TensorRT engines) stay whole-model, docs/methodology.md "Compiled
#: runtimes on the operator tables" says why.
DIFFUSION_TABLE_RUNTIMES: tuple[Runtime, ...] = (
    "pytorch", "torch-compile", "onnxruntime", "tensorrt"
)  # fmt: skip
DIFFUSION_TABLE_PRECISIONS: tuple[Precision, ...] = ("fp32", "tf32", "bf16", "fp16")
#: The datapaths a GeForce board runs at half rate, accumulating in FP32 (its int8 runs whole):
#: what perf.prior_compute_efficiency holds at efficiency.HALF_RATE_GEMM_SHARE
HALF_RATE_PRECISIONS: tuple[Precision, ...] = ("fp16", "bf16", "tf32")
#: Diffusion presets whose diffusers pipeline decodes the image in float32 whatever the job's
#: precision: StableDiffusionXLPipeline upcasts a float16 VAE where its config's force_upcast
#: holds (diffusers pipeline_stable_diffusion_xl.py: "make sure the VAE is in float32 mode, as
#: it overflows in float16"), and AutoencoderKL's force_upcast defaults to True "for high image
#: resolution pipelines, such as SD-XL" (autoencoder_kl.py); StableDiffusionPipeline (SD 1.5)
#: and FluxPipeline decode at the job's precision (perf._decode_ops)
FP32_DECODE_PRESETS: tuple[str, ...] = ("sdxl",)
#: Runtimes that run the diffusers pipeline's own decode code (eager, and torch.compile of its
#: UNet); TensorRT's and ONNX Runtime's exported VAEs run at the precision they were built in
DIFFUSERS_DECODE_RUNTIMES: tuple[Runtime, ...] = ("pytorch", "torch-compile")
#: Runtimes that run a 16-bit CNN inference as mixed precision over fp32 weights (PyTorch
#: autocast, TensorFlow's AMP graph rewrite): a weight-cast kernel per conv / linear per pass.
AUTOCAST_RUNTIMES: tuple[Runtime, ...] = ("pytorch", "tensorflow", "tensorflow-xla")
#: The runtimes task 'serving' models (data/efficiency.yaml serving_runtimes).
ServingRuntime = Literal["vllm", "sglang", "tensorrt-llm", "llama.cpp", "mlx", "transformers"]
SERVING_RUNTIMES: tuple[ServingRuntime, ...] = get_args(ServingRuntime)
#: Embedding servers an encoder (embedding model, reranker) is served on: a dynamic batcher
#: around one forward pass a request (app/domain/serving_encoder.py).
EncoderServingRuntime = Literal["tei", "infinity", "sentence-transformers", "vllm-pooling"]
ENCODER_SERVING_RUNTIMES: tuple[EncoderServingRuntime, ...] = get_args(EncoderServingRuntime)
#: How a serving runtime admits a request against its KV pool (data/efficiency.yaml
#: ``serving_runtimes.<runtime>.kv_admission``): ``reserve_full`` holds room for its whole prompt
#: and output from the start (TensorRT-LLM's GUARANTEED_NO_EVICT); ``on_demand`` allocates the
#: cache as tokens arrive and preempts a request when the pool runs out (vLLM V1, SGLang).
KvAdmission = Literal["reserve_full", "on_demand"]
KV_ADMISSIONS: tuple[KvAdmission, ...] = get_args(KvAdmission)
#: The precisions an encoder is served at: the embedding servers' dtypes (TEI's --dtype takes
#: float16, bfloat16, float32; infinity's and sentence-transformers' torch dtypes the same).
EncoderServingPrecision = Literal["fp32", "fp16", "bf16"]
ENCODER_SERVING_PRECISIONS: tuple[EncoderServingPrecision, ...] = get_args(EncoderServingPrecision)
#: What a serving row serves: a decoder generating tokens, or an encoder (one forward pass).
ServingKind = Literal["decoder", "encoder"]
#: How a serving replica uses several GPUs: tensor parallel, whole layers per GPU, or not at all.
MultiGpu = Literal["tensor", "layers", "none"]
MULTI_GPU_MODES: tuple[MultiGpu, ...] = get_args(MultiGpu)

#: The weight format of a quantised model (bits per weight live in data, owned by `accuracy`).
Quantization = Literal[
    "none", "gptq", "awq", "nf4", "q4_0", "q4_k_m", "q8_0", "mxfp4", "nvfp4", "mlx_4bit"
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
    "mlx_4bit": "MLX 4-bit",
}
#: The precision a weight format's weights are stored at (the engine's memory class).
QUANTIZATION_PRECISION: dict[str, Precision] = {
    "gptq": "int4",
    "awq": "int4",
    "nf4": "int4",
    "q4_0": "int4",
    "q4_k_m": "int4",
    "q8_0": "int8",
    # 4-bit floating-point formats (E2M1 values with a block scale): fp4, as serving has them;
    # 16-bit math where the GPU or runtime has no FP4 kernels (llm_step.datapath)
    "mxfp4": "fp4",
    "nvfp4": "fp4",
    # MLX's own 4-bit (mlx_lm.convert -q): int4 values, a 16-bit scale and bias per 64
    "mlx_4bit": "int4",
}
#: Precisions the engine models only as a named weight format's (NVFP4/MXFP4 weights run as
#: fp4, app.domain.formats), not yet when asked bare (PrecisionRow.modelled).
FORMAT_ONLY_PRECISIONS: tuple[Precision, ...] = ("fp4",)
#: llama.cpp's formats (GGUF): a model in one runs on llama.cpp.
GGUF_FORMATS: tuple[Quantization, ...] = ("q4_0", "q4_k_m", "q8_0")
#: The weight formats llama.cpp inference is modelled for: the GGUF types above, and MXFP4 (the
#: format gpt-oss is released in, which llama.cpp reads through the same integer-dot kernels as
#: its Q4 types: ggml-cuda vecdotq.cuh ``vec_dot_mxfp4_q8_1``, fp4 values to int8 by a table)
LLAMACPP_FORMATS: tuple[Quantization, ...] = (*GGUF_FORMATS, "mxfp4")
#: MLX's own weight formats (what mlx_lm.convert -q writes, mlx-community's "-4bit" models): a
#: model in one runs on MLX only, as a GGUF file runs on llama.cpp.
MLX_FORMATS: tuple[Quantization, ...] = ("mlx_4bit",)
#: Formats whose bits per weight are a mean over the whole file (data/efficiency.yaml
#: ``quantization``): GGUF's types (llama-quantize counts every tensor) and MLX's own 4-bit,
#: which quantises the embeddings and LM head with the rest (formats.MLX_AFFINE_4BIT_BITS).
WHOLE_FILE_FORMATS: tuple[Quantization, ...] = (*GGUF_FORMATS, *MLX_FORMATS)
#: The format a runtime stores a bare precision's weights in where that is the runtime's own,
#: with no format named: MLX at int4 is its affine 4-bit (formats.runtime_bits), so a row says
#: that format's name and quality cost, not GPTQ/AWQ's.
RUNTIME_OWN_FORMATS: dict[tuple[str, str], Quantization] = {("mlx", "int4"): "mlx_4bit"}
# The 4-bit bases QLoRA fine-tuning is modelled on: bitsandbytes' NF4 (the QLoRA paper) and
# AutoGPTQ's GPTQ Int4 (Qwen's Q-LoRA recipe, the fine-tuning tuning rows' base_quant)
QLORA_BASES: tuple[Quantization, ...] = ("nf4", "gptq")
# 4-bit formats Transformers loads with its own kernels (AWQ, GPTQ, bitsandbytes NF4): a pinned
# one gets the GGUF Q4_K_M what-if (app/recommend/whatif.py)
TRANSFORMERS_4BIT: tuple[Quantization, ...] = ("awq", "gptq", "nf4")

KvCachePrecision = Literal["bf16", "fp16", "fp8"]
KV_CACHE_PRECISIONS: tuple[KvCachePrecision, ...] = get_args(KvCachePrecision)
#: Weight precisions the serving planner tries, preferred first when GPU count and speed tie
#: (higher weight precision first).
SERVING_PRECISION_ORDER: tuple[Precision, ...] = ("bf16", "fp16", "fp8", "int8", "int4", "fp4")
#: 4-bit weight precisions: used only when the user asks (constraints.allow_4bit or a named
#: 4-bit format), each with its quality cost said (data/quality.yaml).
FOUR_BIT_PRECISIONS: tuple[Precision, ...] = ("int4", "fp4")
#: Mixed-precision (AMP) datapaths: the CNN training a shipped operator table prices (FP32/TF32
#: CNN training scored worse per operator than whole-model on the tuning set, perf.table_prices).
AMP_PRECISIONS: tuple[Precision, ...] = ("fp16", "bf16")
#: Precisions that store a model's weights as trained: no quantisation quality cost.
UNQUANTISED_PRECISIONS: tuple[Precision, ...] = ("fp32", "tf32", "bf16", "fp16")
#: Precisions a GPU page answers "the largest model that fits" for, most to least memory per
#: weight.
FIT_PRECISIONS: tuple[Precision, ...] = ("bf16", "fp8", "int8", "int4")
#: Datapaths whose GEMM efficiency a kernel profile may set (fp32 stays the prior: it is also
#: the CUDA-core rate of the non-tensor kernels).
PROFILED_GEMM_PRECISIONS: tuple[Precision, ...] = ("tf32", "fp16", "bf16", "fp8")

# ---------------------------------------------------------------- the question

Framework = Literal["pytorch", "tensorflow", "jax"]
FRAMEWORKS: tuple[Framework, ...] = get_args(Framework)
FRAMEWORK_LABELS: dict[str, str] = {
    "pytorch": "PyTorch",
    "tensorflow": "TensorFlow",
    "jax": "JAX",
}
#: The framework whose program each runtime runs. llama.cpp, MLX, TensorRT, TensorRT-LLM and
#: ONNX Runtime are no framework's: they load what any of them exported.
RUNTIME_FRAMEWORK: dict[str, Framework] = {
    "pytorch": "pytorch",
    "torch-compile": "pytorch",
    "transformers": "pytorch",
    "vllm": "pytorch",
    "sglang": "pytorch",
    "megatron": "pytorch",
    "tensorflow": "tensorflow",
    "tensorflow-xla": "tensorflow",
    "jax": "jax",
}
#: The runtimes of the graph frameworks, which load no AWQ, GPTQ or GGUF weights (rank's
#: 4-bit tip names where those run instead).
GRAPH_FRAMEWORK_RUNTIMES: tuple[str, ...] = tuple(
    r for r, f in RUNTIME_FRAMEWORK.items() if f != "pytorch"
)

Acquisition = Literal["buy", "rent", "either"]
ACQUISITIONS: tuple[Acquisition, ...] = get_args(Acquisition)
ACQUISITION_LABELS: dict[str, str] = {
    "either": "Buy or rent",
    "buy": "Buy",
    "rent": "Rent (cloud)",
}

Objective = Literal["fastest", "best_value", "cheapest", "balanced"]
OBJECTIVES: tuple[Objective, ...] = get_args(Objective)
#: Objectives whose metric never falls as the throughput rises at fixed prices
#: (rank.metric_of), so a throughput bound bounds them.
BOUNDED_OBJECTIVES: tuple[Objective, ...] = ("fastest", "best_value", "cheapest")
#: Objectives that rank by cost: an unpriced row has no place in their order.
PRICE_OBJECTIVES: tuple[Objective, ...] = ("best_value", "cheapest")
#: Which purchase price a bought card is priced at (auto: new, else used, else launch).
PurchaseBasis = Literal["auto", "new", "used", "launch"]
PURCHASE_BASES: tuple[PurchaseBasis, ...] = get_args(PurchaseBasis)
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

# ---------------------------------------------------------------- prices and offers

#: What an answer's cost rests on: owning the cards or renting them.
PriceBasis = Literal["buy", "rent"]
PRICE_BASES: tuple[PriceBasis, ...] = get_args(PriceBasis)
#: An offer is a cloud instance or a purchase price.
OfferKind = Literal["cloud", "purchase"]
OFFER_KINDS: tuple[OfferKind, ...] = get_args(OfferKind)
#: The condition a purchase price is for ("market": the cheapest listings, new or used, as a
#: street 'best deals' figure gives them).
Condition = Literal["new", "used", "launch", "market"]
CONDITIONS: tuple[Condition, ...] = get_args(Condition)
#: Conditions whose price may be a second-hand card's: bought without the maker's warranty
#: or a vendor's support (compat.second_hand_caveat).
SECOND_HAND_CONDITIONS: tuple[Condition, ...] = ("used", "market")
#: The tier of a rental offer.
Tier = Literal["on-demand", "spot", "marketplace", "community"]
TIERS: tuple[Tier, ...] = get_args(Tier)
#: Kinds of host a rental may come from; spot is a separate choice (allow_spot).
HostTier = Literal["on-demand", "marketplace", "community"]
HOST_TIERS: tuple[HostTier, ...] = get_args(HostTier)
#: Tiers whose instances are the provider's own, on its own network: several of them can be
#: booked as one cluster for a job that spans nodes. A marketplace's or a community's hosts
#: are independent machines, with no fabric between them that the estimate could assume.
CLUSTER_TIERS: tuple[Tier, ...] = ("on-demand", "spot")

# ---------------------------------------------------------------- hardware

#: The most GPUs one job may ask for (512: 64 eight-GPU servers, the largest pretraining run
#: the engine plans): the planner's last count (evaluate.COUNTS), the API's `num_gpus`,
#: `max_gpus` and launch-spec `gpus` bound and the CLI's `launch-spec --gpus` alike.
MOST_GPUS = 512

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
#: Segments whose GPU comes one to a machine (laptops, SoCs with unified memory).
SINGLE_DEVICE_SEGMENTS: tuple[Segment, ...] = ("soc", "laptop")
#: Cards people build a machine of, several to a host (compat.rig_caveat).
RIG_SEGMENTS: tuple[Segment, ...] = ("consumer", "workstation")
#: Cards whose NVLink bridge is an accessory sold apart, sized to the slot spacing, that no
#: offer states (topology.accessory_bridge): their pairs are priced over PCIe.
ACCESSORY_BRIDGE_SEGMENTS: tuple[Segment, ...] = ("consumer", "workstation")

#: Software backends a GPU entry in the catalog may list.
#: How a card is cooled as sold: ``passive`` (a heat sink without fans: the server chassis must
#: force air through it), ``active`` (its own fans), ``liquid`` (a cold plate on a loop).
Cooling = Literal["passive", "active", "liquid"]
COOLINGS: tuple[Cooling, ...] = get_args(Cooling)

Backend = Literal["cuda", "rocm", "mps", "xpu", "hpu", "directml", "vulkan", "metal", "cpu"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)
#: Backends PyTorch can run the benchmark runner on (what a device report names).
DeviceBackend = Literal["cuda", "rocm", "mps", "xpu", "cpu"]
DEVICE_BACKENDS: tuple[DeviceBackend, ...] = get_args(DeviceBackend)
#: Backends Triton kernels run on (Liger Kernel, Cut Cross Entropy: rank's fused-loss tip).
TRITON_BACKENDS: tuple[Backend, ...] = ("cuda", "rocm")
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


# The backend a runtime that is not PyTorch drives, in its own words: llama.cpp builds for
# Metal on a Mac and for SYCL (oneAPI) or Vulkan on Intel; MPS and XPU are PyTorch's names.
RUNTIME_BACKEND_WORDS: dict[tuple[str, str], str] = {
    ("llama.cpp", "mps"): "Metal",
    ("llama.cpp", "xpu"): "SYCL (oneAPI)",
    ("llama.cpp", "rocm"): "ROCm (HIP)",
    ("llama.cpp", "vulkan"): "Vulkan",
    ("mlx", "mps"): "Metal",
    # ONNX Runtime reaches Apple GPUs through its CoreML execution provider, not MPS
    ("onnxruntime", "mps"): "Apple GPUs (CoreML execution provider)",
}


def runtime_name(runtime: str) -> str:
    """A runtime in a sentence's words (RUNTIME_NAMES); an unknown id as itself."""
    return RUNTIME_NAMES.get(runtime, runtime)


def backend_name(backend: str, runtime: str | None = None) -> str:
    """A backend in a sentence's words, in the runtime's own where it has them (llama.cpp's
    Metal, not PyTorch's "mps"); an unknown id as itself."""
    own = RUNTIME_BACKEND_WORDS.get((runtime, backend)) if runtime else None
    return own or BACKEND_LABELS.get(backend, backend)


def framework_name(framework: str) -> str:
    """A framework in a sentence's words (FRAMEWORK_LABELS); an unknown id as itself."""
    return FRAMEWORK_LABELS.get(framework, framework)


# The GPUs a framework that is not PyTorch runs on through a vendor's plugin, in its own words:
# "mps" and "xpu" are PyTorch's backend names ("tensorflow on mps" named no real build).
FRAMEWORK_BACKEND_WORDS: dict[tuple[str, str], str] = {
    ("tensorflow", "mps"): "Apple GPUs (the tensorflow-metal plugin)",
    ("tensorflow", "xpu"): "Intel GPUs (Intel Extension for TensorFlow)",
    ("jax", "mps"): "Apple GPUs (the jax-metal plugin)",
    ("jax", "xpu"): "Intel GPUs (Intel Extension for OpenXLA)",
}


def labelled(labels: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """(value, label) pairs in the table's order, for select boxes and help texts."""
    return tuple(labels.items())


def choices(values: tuple[str, ...]) -> str:
    """'a | b | c' for help texts."""
    return " | ".join(values)
