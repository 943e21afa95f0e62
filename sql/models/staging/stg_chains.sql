-- description: EVM chains the Data API supports, one row per chain per feature listing per snapshot (a dimension).
-- unique: feature, chain_id, snapshot_at
-- incremental: true
-- not_null: network, chain_name, vm_name, rpc_url, is_testnet, native_token_symbol, native_token_decimals
-- accepted_values: feature = all | nftIndexing | webhooks | teleporter
-- column: feature: the listing the chain was in: all (no filter) or the feature it has enabled (nftIndexing, webhooks, teleporter)
-- column: chain_id: the EVM chain id
-- column: network: mainnet or fuji, the network the listing was asked for
-- column: status: the chain's status as the API gives it (OK, UNAVAILABLE)
-- column: chain_name: the chain's name
-- column: chain_description: the chain's description
-- column: platform_chain_id: its blockchain id on the P-Chain
-- column: subnet_id: the subnet (or L1) that validates it
-- column: vm_id: id of its virtual machine
-- column: vm_name: name of its virtual machine (EVM)
-- column: explorer_url: its block explorer
-- column: rpc_url: its public JSON-RPC endpoint
-- column: ws_url: its public websocket endpoint
-- column: is_testnet: whether it is a test network
-- column: is_private: whether the chain is private, where the API says
-- column: multicall_address: its Multicall contract, if any
-- column: native_token_name: name of its native (gas) token
-- column: native_token_symbol: symbol of its native token
-- column: native_token_decimals: decimals of its native token
-- column: native_token_logo_uri: logo of its native token
-- column: chain_logo_uri: the chain's logo
-- column: enabled_features: the features the API lists as enabled on it
-- column: snapshot_at: when avalake observed the listing (one time per run)
-- column: extracted_at: when avalake wrote the row
with source as not materialized (
    select * from {{ lake('chains') }}
),

newest as (
    select * from {{ newest('source', 'feature, chainId, _snapshot_at') }}
),

final as (
    select
        feature,
        chainId as chain_id,
        network,
        status,
        chainName as chain_name,
        description as chain_description,
        platformChainId as platform_chain_id,
        subnetId as subnet_id,
        vmId as vm_id,
        vmName as vm_name,
        explorerUrl as explorer_url,
        rpcUrl as rpc_url,
        wsUrl as ws_url,
        isTestnet as is_testnet,
        "private" as is_private,
        utilityAddresses.multicall as multicall_address,
        networkToken.name as native_token_name,
        networkToken.symbol as native_token_symbol,
        networkToken.decimals as native_token_decimals,
        networkToken.logoUri as native_token_logo_uri,
        chainLogoUri as chain_logo_uri,
        enabledFeatures as enabled_features,
        _snapshot_at as snapshot_at,
        _extracted_at as extracted_at
    from newest
)

select * from final
