// The ONNX graph builder Trainpool writes its graphs with: the MLP's training and evaluation graphs
// (engine/mlp-onnx/graph.ts, run by ONNX Runtime in the workers) and the exported inference models
// (export/onnx-model.ts, written in main). Nodes with generated output names, typed constants,
// inputs and outputs, encoded with onnx-proto (static protobufjs code for ONNX 1.10's schema) at IR
// version 8 and opset 13 — what Debian's onnx 1.12 checker and every current runtime accept.
import { onnx } from 'onnx-proto'

const OPSET = 13
const IR_VERSION = 8

type Attr = number | number[]

/** A small graph builder: nodes with generated output names, typed constants, inputs/outputs (the training graphs here; the exported inference model: export/onnx-model.ts). */
export class Builder {
  readonly nodes: onnx.INodeProto[] = []
  readonly initializers: onnx.ITensorProto[] = []
  readonly inputs: onnx.IValueInfoProto[] = []
  readonly outputs: onnx.IValueInfoProto[] = []
  private count = 0
  private readonly consts = new Map<string, string>()

  constructor(readonly elemType: onnx.TensorProto.DataType) {}

  op(type: string, inputs: string[], attrs: Record<string, Attr> = {}, output?: string): string {
    const out = output ?? `${type.toLowerCase()}_${this.count++}`
    const attribute = Object.entries(attrs).map(([name, v]): onnx.IAttributeProto =>
      Array.isArray(v) ? { name, type: onnx.AttributeProto.AttributeType.INTS, ints: v } : { name, type: onnx.AttributeProto.AttributeType.INT, i: v },
    )
    this.nodes.push({ opType: type, input: inputs, output: [out], name: out, attribute })
    return out
  }

  /** A scalar of the graph's element type (tfjs turns JS numbers into float32 scalars the same way). */
  scalar(value: number): string {
    const key = `f:${value}`
    let name = this.consts.get(key)
    if (!name) {
      name = `const_${this.count++}`
      const t: onnx.ITensorProto = { name, dataType: this.elemType, dims: [] }
      if (this.elemType === onnx.TensorProto.DataType.DOUBLE) t.doubleData = [value]
      else t.floatData = [value]
      this.initializers.push(t)
      this.consts.set(key, name)
    }
    return name
  }

  /** A float32 tensor of values (a trained model's weights). */
  weights(dims: number[], values: readonly number[]): string {
    const name = `const_${this.count++}`
    this.initializers.push({ name, dataType: onnx.TensorProto.DataType.FLOAT, dims, floatData: [...values] })
    return name
  }

  /** An int64 vector (shapes, axes). */
  ints(values: number[]): string {
    const key = `i:${values.join(',')}`
    let name = this.consts.get(key)
    if (!name) {
      name = `const_${this.count++}`
      this.initializers.push({ name, dataType: onnx.TensorProto.DataType.INT64, dims: [values.length], int64Data: values })
      this.consts.set(key, name)
    }
    return name
  }

  private valueInfo(name: string, dims: (number | string)[]): onnx.IValueInfoProto {
    return {
      name,
      type: { tensorType: { elemType: this.elemType, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
    }
  }

  input(name: string, dims: (number | string)[]): string {
    this.inputs.push(this.valueInfo(name, dims))
    return name
  }

  output(name: string, dims: (number | string)[]): void {
    this.outputs.push(this.valueInfo(name, dims))
  }

  // ---- shorthands
  reduceSum(x: string, axis: number, keepdims = 0): string {
    return this.op('ReduceSum', [x, this.ints([axis])], { keepdims })
  }
  reshape(x: string, shape: number[]): string {
    return this.op('Reshape', [x, this.ints(shape)])
  }
  /**
   * ReLU's derivative applied, from the ReLU's OUTPUT a = relu(z): dx · step(z) as tfjs writes it, with
   * step(z) = sign(a) ∈ {0, 1} (a ≥ 0, and a > 0 ⇔ z > 0). Sign+Mul costs half of Greater+Where in
   * ORT, and the pre-activation z then has one consumer, so ORT fuses Gemm+Relu.
   */
  reluGrad(dx: string, a: string): string {
    return this.op('Mul', [dx, this.op('Cast', [this.op('Greater', [a, this.scalar(0)])], { to: this.elemType })])
  }

  /** The model's bytes; `metadata` becomes its metadata_props (key → value). */
  encode(graphName: string, metadata: Record<string, string> = {}): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: IR_VERSION,
      opsetImport: [{ domain: '', version: OPSET }],
      producerName: 'trainpool',
      metadataProps: Object.entries(metadata).map(([key, value]) => ({ key, value })),
      graph: { name: graphName, node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs },
    })
    return onnx.ModelProto.encode(model).finish()
  }
}
