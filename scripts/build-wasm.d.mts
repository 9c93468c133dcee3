export const SOURCE: string
export const GENERATED: string
export function compileHistWasm(): Promise<Buffer>
export function generatedSource(wasm: Buffer): string
