// The package ships no types; espeakRuntime.ts narrows the default export to what it uses.
declare module '@echogarden/espeak-ng-emscripten' {
  const createModule: (options?: Record<string, unknown>) => Promise<unknown>;
  export default createModule;
}
