import { ConfigProvider, Layer } from "effect"

/** The settings of a program: environment variable names to values. */
export type Env = Readonly<Record<string, string>>

/**
 * Configuration for the layers built under it, through the program's real Config path (the same names a child
 * process gets in its environment): tests configure the application as an operator would, only with other values.
 */
export const withEnv = (env: Env) => Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
