/** oidc-provider ships no types (its own are in @types/oidc-provider, not worth a dependency for one test helper). */
declare module "oidc-provider" {
  const Provider: any;
  export default Provider;
}
