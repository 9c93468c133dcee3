/** The Electron executable for the project at `root`, or null (never downloads). */
export declare function electronExecutablePath(root: string): string | null
