-- description: ERC-721 tokens held by each configured EVM address, with the address's native balance from the same answer, one row per token held per snapshot.
-- unique: chain_id, owner_address, token_address, token_id_exact, snapshot_at
-- incremental: true
-- not_null: network, erc_type, metadata_index_status
-- accepted_values: erc_type = ERC-721
-- column: chain_id: the EVM chain id
-- column: owner_address: the configured address holding the token (lowercase)
-- column: token_address: the token's collection contract (lowercase)
-- column: token_id: the token id (DECIMAL; null beyond 38 digits)
-- column: token_id_exact: the token id as an exact decimal string (uint256)
-- column: network: mainnet or fuji
-- column: collection_name: the collection's name
-- column: collection_symbol: the collection's symbol
-- column: erc_type: the token standard, as the API gives it (ERC-721)
-- column: token_uri: the token's metadata URI
-- column: metadata_index_status: how indexing its metadata went (INDEXED, UNINDEXED, MISSING_TOKEN, INVALID_TOKEN_URI, …)
-- column: metadata_updated_at: when its metadata was last indexed
-- column: metadata_name: the token's name from its metadata
-- column: metadata_symbol: the token's symbol from its metadata
-- column: metadata_image_uri: its image
-- column: metadata_description: its description
-- column: metadata_animation_uri: its animation
-- column: metadata_external_url: its external URL
-- column: metadata_background: its background colour
-- column: metadata_attributes: its attributes as JSON text
-- column: native_token_symbol: symbol of the chain's native token
-- column: native_token_decimals: decimals of the native token
-- column: native_balance: the owner's native balance in wei at the same moment (DECIMAL; null beyond 38 digits)
-- column: native_balance_exact: the same balance as an exact decimal string
-- column: native_price_usd: USD price of the native token, as the API gives it
-- column: native_balance_usd: the native balance's USD value, as the API gives it
-- column: snapshot_at: when avalake observed it (one time per run)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('erc721_balances') }}
),

newest as (
    select * from {{ newest('source', 'chain, owner, address, tokenIdExact, _snapshot_at') }}
),

final as (
    select
        chain as chain_id,
        lower(owner) as owner_address,
        lower(address) as token_address,
        tokenId as token_id,
        tokenIdExact as token_id_exact,
        network,
        "name" as collection_name,
        symbol as collection_symbol,
        ercType as erc_type,
        tokenUri as token_uri,
        metadata.indexStatus as metadata_index_status,
        metadata.metadataLastUpdatedTimestamp as metadata_updated_at,
        metadata.name as metadata_name,
        metadata.symbol as metadata_symbol,
        metadata.imageUri as metadata_image_uri,
        metadata.description as metadata_description,
        metadata.animationUri as metadata_animation_uri,
        metadata.externalUrl as metadata_external_url,
        metadata.background as metadata_background,
        metadata.attributes as metadata_attributes,
        nativeTokenBalance.symbol as native_token_symbol,
        nativeTokenBalance.decimals as native_token_decimals,
        nativeTokenBalance.balance as native_balance,
        nativeTokenBalance.balanceExact as native_balance_exact,
        case when nativeTokenBalance.price.currencyCode = 'usd'
            then nativeTokenBalance.price."value" end as native_price_usd,
        case when nativeTokenBalance.balanceValue.currencyCode = 'usd'
            then nativeTokenBalance.balanceValue."value" end as native_balance_usd,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
