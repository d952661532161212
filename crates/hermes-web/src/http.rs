//! One way to call a JSON API: send, check the status, parse the body;
//! errors name the service, never the request (which may carry a key).

/// Sends `request`; its JSON body when the status is 2xx.
pub async fn json_of(
    request: reqwest::RequestBuilder,
    what: &str,
) -> Result<serde_json::Value, String> {
    let response = request.send().await.map_err(|e| {
        format!(
            "Could not reach {what}: {}",
            if e.is_timeout() {
                "timed out"
            } else if e.is_connect() {
                "cannot connect"
            } else {
                "request failed"
            }
        )
    })?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{what} returned HTTP {}", status.as_u16()));
    }
    response
        .json()
        .await
        .map_err(|_| format!("Could not parse {what} response as JSON"))
}
