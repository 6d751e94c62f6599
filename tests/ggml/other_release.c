/* Preloaded in front of libggml-base (make test-ggml): a ggml that reports another release,
 * as a ggml of another backend API would. The plugin must refuse to load into it. */
const char *ggml_version(void);

const char *ggml_version(void)
{
    return "0.21.0";
}
